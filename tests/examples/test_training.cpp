// Training runs, step for step with PyTorch, and the three training examples, run as a learner runs them.
//
// Parity: a seeded 50-step teacher-student run (FeedForward, mse_loss, a shuffling DataLoader with
// its own Generator) with SGD-momentum and with AdamW gives PyTorch's loss at every step, within
// 1e-4 relative; tools/reference/train_reference.py is the PyTorch twin that wrote the fixture.
// Examples: each binary runs in a fresh temporary folder; the test reads the figures of its summary
// line, then parses the CSV and SVG files it wrote, and checks its answers to bad input.
#include <sys/resource.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/random.hpp"
#include "data/csv.hpp"
#include "data/dataloader.hpp"
#include "data/datasets.hpp"
#include "examples/support/checkpoint_step.hpp"
#include "examples/support/csv.hpp"
#include "examples/support/plot.hpp"
#include "io/safetensors.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"
#include "optim/sgd.hpp"
#include "support.hpp"

using namespace minigrad;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// ---- parity runs -------------------------------------------------------------------------------

const json& parity_fixture() {
  static const json fixture = [] {
    std::ifstream file(std::string(MINIGRAD_FIXTURES_DIR) + "/train_parity.json");
    if (!file) throw std::runtime_error("missing fixture train_parity.json");
    return json::parse(file);
  }();
  return fixture;
}

const json& parity_spec(const std::string& name) {
  for (const json& run : parity_fixture().at("runs"))
    if (run.at("name") == name) return run;
  throw std::runtime_error("train_parity.json has no run " + name);
}

// The optimizer the fixture names, with its options (the others keep PyTorch's defaults).
std::unique_ptr<optim::Optimizer> make_optimizer(const json& spec, std::vector<Tensor> parameters) {
  const json& o = spec.at("options");
  if (o.size() != 2) throw std::runtime_error("expected two options, lr and one more, got " + o.dump());
  if (spec.at("optimizer") == "SGD")
    return std::make_unique<optim::SGD>(parameters,
                                        optim::SGDOptions{.lr = o.at("lr"), .momentum = o.at("momentum")});
  if (spec.at("optimizer") == "AdamW")
    return std::make_unique<optim::AdamW>(
        parameters, optim::AdamWOptions{.lr = o.at("lr"), .weight_decay = o.at("weight_decay")});
  throw std::runtime_error("unknown optimizer " + spec.at("optimizer").dump());
}

// The C++ twin of train_reference.py's run(): the same lines, in the same order.
std::vector<double> parity_run(const json& spec) {
  const json& c = parity_fixture().at("config");
  const int64_t n_embd = c.at("n_embd"), widen = c.at("widen"), steps = c.at("steps");
  manual_seed(c.at("seed").get<uint64_t>());
  nn::FeedForward teacher(n_embd, widen);  // draws first from the default generator ...
  nn::FeedForward student(n_embd, widen);  // ... so the student starts somewhere else

  Generator generator(c.at("seed").get<uint64_t>());
  auto [x, y] = data::teacher_student(
      [&](const Tensor& v) { return teacher(v); },
      {c.at("examples").get<int64_t>(), c.at("block_size").get<int64_t>(), n_embd}, generator);
  data::DataLoader loader(data::TensorDataset(x, y), {.batch_size = c.at("batch_size"), .shuffle = true},
                          generator);

  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(spec, student.parameters());
  std::vector<double> losses;
  while (static_cast<int64_t>(losses.size()) < steps) {
    for (const auto& batch : loader) {
      Tensor loss = nn::functional::mse_loss(student(batch[0]), batch[1]);
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      losses.push_back(loss.item<double>());
      if (static_cast<int64_t>(losses.size()) == steps) break;
    }
  }
  return losses;
}

void check_parity(const std::string& name) {
  const json& spec = parity_spec(name);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> got = parity_run(spec);
  BOOST_TEST_MESSAGE(name << ": " << got.size() << " steps in "
                          << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                          << " s");

  const std::vector<double> want = spec.at("losses").get<std::vector<double>>();
  BOOST_TEST_REQUIRE(got.size() == want.size());
  BOOST_TEST(want.back() < 0.8 * want.front(), "the run must really train, or matching it proves little");
  size_t worst = 0;
  for (size_t i = 1; i < got.size(); ++i)
    if (!(std::abs(got[i] / want[i] - 1) <= std::abs(got[worst] / want[worst] - 1))) worst = i;
  BOOST_TEST_MESSAGE(name << ": largest relative difference " << std::abs(got[worst] / want[worst] - 1)
                          << " at step " << worst + 1);
  BOOST_TEST(std::abs(got[worst] / want[worst] - 1) <= 1e-4,
             name << ": step " << worst + 1 << " has loss " << got[worst] << ", PyTorch has " << want[worst]);
}

// ---- running the examples ------------------------------------------------------------------------

// A new, empty folder under the system's temporary folder, removed with everything in it at the end.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "minigrad-training-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

using Run = minigrad_test::CommandResult;  // stdout and stderr together

// Runs examples/<program> with `arguments` inside `folder`, as `cd folder && program arguments`.
Run run_example(const std::string& program, const std::string& arguments, const TempFolder& folder) {
  const std::string binary = std::string(MINIGRAD_BINARY_DIR) + "/examples/" + program;
  BOOST_REQUIRE_MESSAGE(fs::exists(binary),
                        "build the example first: cmake --build <build folder> --target " + program);
  const std::string command = "cd '" + folder.path.string() + "' && '" + binary + "' " + arguments + " 2>&1";
  return minigrad_test::run_command(command);
}

// The number after `label` in the output ("final loss 0.0123" -> 0.0123); fails the test if absent.
double figure(const Run& run, const std::string& label) {
  std::smatch match;
  const std::regex pattern(label + " ([-+0-9.eE]+|nan|inf)");
  BOOST_REQUIRE_MESSAGE(std::regex_search(run.output, match, pattern),
                        "no \"" + label + "\" in:\n" + run.output);
  return std::stod(match[1]);
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// Runs f, which must throw Exception with `fragment` in its message.
template <typename Exception, typename F>
void check_throws(F&& f, const std::string& fragment) {
  try {
    f();
  } catch (const Exception& error) {
    BOOST_TEST(contains(error.what(), fragment), "\"" << fragment << "\" not in: " << error.what());
    return;
  }
  BOOST_ERROR("did not throw; expected a message with \"" << fragment << "\"");
}

// <name>_loss.csv: a `step,loss` header, then steps 1, 2, ..., `steps` with finite positive losses.
// Returns the losses.
std::vector<double> check_loss_csv(const TempFolder& folder, const std::string& name, int64_t steps) {
  const fs::path path = folder.path / (name + "_loss.csv");
  std::ifstream file(path);
  std::string header;
  BOOST_REQUIRE_MESSAGE(std::getline(file, header), "cannot read " + path.string());
  BOOST_TEST(header == "step,loss");
  const Tensor table = data::read_csv(path.string(), {.skip_header = true});
  BOOST_TEST_REQUIRE(table.shape() == Shape({steps, 2}));
  std::vector<double> losses;
  for (int64_t i = 0; i < steps; ++i) {
    BOOST_TEST(table.at({i, 0}) == static_cast<double>(i + 1));
    const double loss = table.at({i, 1});
    BOOST_TEST((std::isfinite(loss) && loss >= 0), "row " << i + 1 << " has loss " << loss);
    losses.push_back(loss);
  }
  return losses;
}

namespace pt = boost::property_tree;

// The SVG file parsed as XML; fails the test if it does not parse or is not an <svg>.
pt::ptree read_svg(const fs::path& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), path.string() + " was not written");
  pt::ptree tree;
  try {
    pt::read_xml(path.string(), tree);
  } catch (const pt::xml_parser_error& error) {
    BOOST_FAIL(path.string() << " is not well-formed XML: " << error.what());
  }
  BOOST_REQUIRE_MESSAGE(tree.count("svg") == 1, path.string() + " has no <svg> root");
  return tree.get_child("svg");
}

// The number of `element` children of the svg root.
size_t count(const pt::ptree& svg, const std::string& element) { return svg.count(element); }

// <name>_loss.svg: two curves (each step's loss and its running mean), each a point per step.
void check_loss_svg(const TempFolder& folder, const std::string& name, int64_t steps) {
  const pt::ptree svg = read_svg(folder.path / (name + "_loss.svg"));
  BOOST_TEST_REQUIRE(count(svg, "polyline") == 2u);
  for (const auto& [element, node] : svg) {
    if (element != "polyline") continue;
    std::istringstream points(node.get<std::string>("<xmlattr>.points"));
    std::string point;
    int64_t n = 0;
    while (points >> point) ++n;
    BOOST_TEST(n == steps);
  }
}

}  // namespace

// ---- the tests -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(training_parity)

BOOST_AUTO_TEST_CASE(sgd_momentum_run_gives_pytorchs_loss_at_every_step) { check_parity("sgd_momentum"); }

BOOST_AUTO_TEST_CASE(adamw_run_gives_pytorchs_loss_at_every_step) { check_parity("adamw"); }

BOOST_AUTO_TEST_SUITE_END()

// In a sanitizer build every loop of ours runs about ten times slower, and the examples' full runs
// would take minutes; there the point is memory errors, not convergence. So the release build runs
// each example with its default settings and checks the figure the example promises, while the
// sanitizer build runs fit_feedforward, the one slow example, for 40 steps and checks a looser
// figure, one that only a working training loop reaches (printed with the result).
#if defined(__SANITIZE_ADDRESS__)
#define MINIGRAD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINIGRAD_SANITIZED 1
#endif
#endif

BOOST_AUTO_TEST_SUITE(training_examples)

BOOST_AUTO_TEST_CASE(fit_feedforward_brings_the_loss_below_5_percent_of_the_first) {
#ifdef MINIGRAD_SANITIZED
  const int64_t steps = 40;
  const double target = 0.15;  // after 40 steps the final loss is 7.2% of the first
#else
  const int64_t steps = 100;   // the default
  const double target = 0.05;  // the figure
#endif
  TempFolder folder;
  const Run run = run_example("fit_feedforward", "--steps " + std::to_string(steps), folder);
  BOOST_TEST_REQUIRE(run.exit_code == 0, run.output);
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("fit_feedforward:")));

  const std::vector<double> losses = check_loss_csv(folder, "fit_feedforward", steps);
  BOOST_TEST(figure(run, "of the first loss") == losses.front(), boost::test_tools::tolerance(1e-5));
  BOOST_TEST(figure(run, "final loss") < target * losses.front());
  BOOST_TEST(figure(run, "on new inputs") < 0.5 * losses.front());  // it learnt some of the teacher, too
  check_loss_svg(folder, "fit_feedforward", steps);
  BOOST_TEST(load_metadata((folder.path / "fit_feedforward.safetensors").string()).at("step") ==
             std::to_string(steps));
}

BOOST_AUTO_TEST_CASE(fit_spiral_reaches_95_percent_training_accuracy_and_draws_its_regions) {
  TempFolder folder;
  const Run run = run_example("fit_spiral", "", folder);
  BOOST_TEST_REQUIRE(run.exit_code == 0, run.output);
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("fit_spiral:")));

  BOOST_TEST(figure(run, "training accuracy") >= 95.0);
  BOOST_TEST(figure(run, "final loss") < 0.2);  // -log(1/3) = 1.1 for a model that guesses

  // Piped, the progress line is a plain line every 100 steps, never rewritten in place.
  BOOST_TEST(!contains(run.output, "\r"));
  BOOST_TEST(contains(run.output, "step 100/600  loss "), run.output);
  BOOST_TEST(contains(run.output, "step 600/600  loss "), run.output);
  BOOST_TEST(!contains(run.output, "step 150/600"), run.output);
  check_loss_csv(folder, "fit_spiral", 600);
  check_loss_svg(folder, "fit_spiral", 600);

  // The regions picture: every one of the 300 points, over cells of all three classes' shades.
  const pt::ptree svg = read_svg(folder.path / "fit_spiral_regions.svg");
  BOOST_TEST(count(svg, "circle") == 300u);
  std::set<std::string> fills;
  for (const auto& [element, node] : svg)
    if (element == "circle") fills.insert(node.get<std::string>("<xmlattr>.fill"));
  BOOST_TEST(fills.size() == 3u);
  BOOST_TEST(count(svg, "rect") > 150u);  // at least one run of cells per grid row
}

BOOST_AUTO_TEST_CASE(fit_digits_reaches_95_percent_test_accuracy) {
  TempFolder folder;
  const Run run = run_example("fit_digits", "", folder);
  BOOST_TEST_REQUIRE(run.exit_code == 0, run.output);
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("fit_digits:")));

  BOOST_TEST(figure(run, "test accuracy") >= 95.0);
  BOOST_TEST(figure(run, "final loss") < 0.1);
  BOOST_TEST(contains(run.output, "(360 held-out images)"));  // 20% of 1797, rounded down for training
  check_loss_csv(folder, "fit_digits", 1350);
  check_loss_svg(folder, "fit_digits", 1350);
}

BOOST_AUTO_TEST_CASE(resume_continues_from_the_last_checkpoint) {
  TempFolder folder;
  const Run first = run_example("fit_spiral", "--steps 200", folder);
  BOOST_TEST_REQUIRE(first.exit_code == 0, first.output);
  const std::vector<double> before = check_loss_csv(folder, "fit_spiral", 200);

  const Run second = run_example("fit_spiral", "--resume --steps 400", folder);
  BOOST_TEST_REQUIRE(second.exit_code == 0, second.output);
  BOOST_TEST(contains(second.output, "resuming from fit_spiral.safetensors at step 200"), second.output);
  BOOST_TEST(contains(second.output, "fit_spiral: 400 steps"), second.output);
  BOOST_TEST(figure(second, "training accuracy") >= 95.0);

  // The curve goes on: the first 200 losses are the first run's, then 200 new ones.
  const std::vector<double> after = check_loss_csv(folder, "fit_spiral", 400);
  BOOST_TEST(std::vector<double>(after.begin(), after.begin() + 200) == before,
             boost::test_tools::per_element());
  BOOST_TEST(load_metadata((folder.path / "fit_spiral.safetensors").string()).at("step") == "400");
}

BOOST_AUTO_TEST_CASE(a_resumed_run_gives_the_losses_of_a_run_never_stopped) {
  // fit_feedforward uses the same batch at every step, so nothing random separates the two runs:
  // the weights, AdamW's averages and step count, and the warm-up's lr must all come back exactly.
  TempFolder straight;
  BOOST_TEST_REQUIRE(run_example("fit_feedforward", "--steps 6", straight).exit_code == 0);
  TempFolder stopped;
  BOOST_TEST_REQUIRE(run_example("fit_feedforward", "--steps 4", stopped).exit_code == 0);
  const Run resumed = run_example("fit_feedforward", "--resume --steps 6", stopped);
  BOOST_TEST_REQUIRE(resumed.exit_code == 0, resumed.output);
  BOOST_TEST(contains(resumed.output, "resuming from fit_feedforward.safetensors at step 4"), resumed.output);

  const std::vector<double> want = check_loss_csv(straight, "fit_feedforward", 6);
  const std::vector<double> got = check_loss_csv(stopped, "fit_feedforward", 6);
  for (size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST_CONTEXT("step " << i + 1) {
      BOOST_TEST(got[i] == want[i], boost::test_tools::tolerance(1e-6));
    }
  }
}

// ---- bad input -------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_loss_that_overflows_stops_training_naming_the_step) {
  // lr 1e30: the first Adam step moves every weight by about 1e30, so the second step's logits
  // overflow float32 and its loss is nan or inf. No checkpoint exists yet.
  TempFolder folder;
  const Run run = run_example("fit_spiral", "--lr 1e30", folder);
  BOOST_TEST(run.exit_code == 1);
  BOOST_TEST(contains(run.output, "at step 2: training stopped"), run.output);
  BOOST_TEST(contains(run.output, "No checkpoint was saved yet"), run.output);
}

BOOST_AUTO_TEST_CASE(a_diverging_resumed_run_names_the_step_and_the_last_checkpoint) {
  TempFolder folder;
  BOOST_TEST_REQUIRE(run_example("fit_spiral", "--steps 200", folder).exit_code == 0);
  const Run run = run_example("fit_spiral", "--resume --steps 400 --lr 1e30", folder);
  BOOST_TEST(run.exit_code == 1);
  BOOST_TEST(contains(run.output, "at step 202: training stopped"), run.output);
  BOOST_TEST(contains(run.output, "fit_spiral.safetensors, holds step 200"), run.output);
}

struct BadArguments {
  std::string program;
  std::string arguments;
  std::string message;  // a fragment the error must contain
};

BOOST_AUTO_TEST_CASE(bad_arguments_are_errors_naming_the_argument) {
  // The flags are CLI11's: its messages, its exit codes (non-zero), and a pointer to --help.
  const std::vector<BadArguments> cases = {
      {"fit_spiral", "--steps abc", "--steps: abc is not a finite number above 0"},
      {"fit_spiral", "--steps 0", "--steps: 0 is not a finite number above 0"},
      {"fit_digits", "--steps 2.5", "Could not convert: --steps = 2.5"},
      {"fit_feedforward", "--lr -0.1", "--lr: -0.1 is not a finite number above 0"},
      {"fit_feedforward", "--lr=fast", "--lr: fast is not a finite number above 0"},
      {"fit_feedforward", "--lr inf", "--lr: inf is not a finite number above 0"},  // trained on nan
      {"fit_feedforward", "--lr 1e400", "--lr: 1e400 is not a finite number above 0"},
      {"fit_spiral", "--steps", "--steps: 1 required"},
      {"fit_digits", "--stpes 10", "not expected: 10 --stpes"},
      {"fit_spiral", "extra", "not expected: extra"},
  };
  for (const BadArguments& c : cases) {
    TempFolder folder;
    const Run run = run_example(c.program, c.arguments, folder);
    BOOST_TEST(run.exit_code != 0, c.program << " " << c.arguments);
    BOOST_TEST(contains(run.output, c.message), c.program << " " << c.arguments << ":\n" << run.output);
    BOOST_TEST(contains(run.output, "Run with --help"), run.output);
    BOOST_TEST(fs::is_empty(folder.path), "a refused run writes no file");
  }
}

BOOST_AUTO_TEST_CASE(a_missing_data_file_is_an_error_naming_the_file) {
  TempFolder folder;
  const Run run = run_example("fit_digits", "--data no-such-digits.csv.gz", folder);
  BOOST_TEST(run.exit_code == 1);
  BOOST_TEST(contains(run.output, "no-such-digits.csv.gz"), run.output);
}

BOOST_AUTO_TEST_CASE(resume_without_a_checkpoint_is_an_error_naming_the_file) {
  TempFolder folder;
  const Run run = run_example("fit_feedforward", "--resume --steps 1", folder);
  BOOST_TEST(run.exit_code == 1);
  BOOST_TEST(contains(run.output, "fit_feedforward.safetensors"), run.output);
}

BOOST_AUTO_TEST_CASE(help_prints_the_flags_and_succeeds) {
  for (const std::string program : {"fit_feedforward", "fit_spiral", "fit_digits"}) {
    TempFolder folder;
    const Run run = run_example(program, "--help", folder);
    BOOST_TEST(run.exit_code == 0);
    BOOST_TEST(contains(run.output, "Usage: " + program + " [OPTIONS]"), run.output);
    for (const std::string flag : {"--steps", "--lr", "--resume"})
      BOOST_TEST(contains(run.output, flag), run.output);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the examples' helpers (examples/support/), on their own -------------------------------------

BOOST_AUTO_TEST_SUITE(example_support)

BOOST_AUTO_TEST_CASE(axis_ticks_are_round_numbers_inside_the_range) {
  // Linear [0, 600]: a fifth of the range is 120, nearest round step 100.
  BOOST_TEST((support::Axis{0, 600}.ticks()) == (std::vector<double>{0, 100, 200, 300, 400, 500, 600}),
             boost::test_tools::per_element());
  // Log [0.003, 0.2]: less than two decades, so 1, 2 and 5 times each power of ten.
  const std::vector<double> log_ticks = support::Axis{0.003, 0.2, 0, 1, true}.ticks();
  const std::vector<double> want = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2};
  BOOST_TEST_REQUIRE(log_ticks.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(log_ticks[i] == want[i], boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(loss_history_reads_back_exactly_up_to_the_checkpoint) {
  TempFolder folder;
  const std::string path = (folder.path / "run_loss.csv").string();
  support::LossHistory history;
  for (int64_t step = 1; step <= 5; ++step) history.add(step, 1.0 / (3.0 * static_cast<double>(step)));
  support::write_csv(path, history);
  const support::LossHistory back = support::read_loss_history(path, 3);
  BOOST_TEST(back.steps == (std::vector<double>{1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(back.losses == std::vector<double>(history.losses.begin(), history.losses.begin() + 3),
             boost::test_tools::per_element());  // exact: the shortest text that reads back the same
}

std::string file_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Review: a CSV rewritten on resume was cut mid-line when the write failed (a file-size limit),
// losing the steps before the checkpoint. A file is now written whole or not at all.
BOOST_AUTO_TEST_CASE(a_failed_write_leaves_the_previous_file_as_it_was) {
  TempFolder folder;
  const std::string path = (folder.path / "loss.csv").string();
  support::LossHistory history;
  for (int step = 1; step <= 10; ++step) history.add(step, 1.0 / step);
  support::write_csv(path, history);
  const std::string before = file_text(path);

  for (int step = 11; step <= 2000; ++step) history.add(step, 1.0 / step);  // about 40 KB
  rlimit limit{};
  BOOST_TEST_REQUIRE(getrlimit(RLIMIT_FSIZE, &limit) == 0);
  const rlimit small{.rlim_cur = 4096, .rlim_max = limit.rlim_max};
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write beyond the limit fails instead
  BOOST_TEST_REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  bool threw = false;
  try {
    support::write_csv(path, history);
  } catch (const std::runtime_error& error) {
    threw = std::string(error.what()).find("write_csv: cannot write " + path) != std::string::npos;
  }
  setrlimit(RLIMIT_FSIZE, &limit);
  std::signal(SIGXFSZ, old_handler);
  BOOST_TEST(threw);
  BOOST_TEST(file_text(path) == before);
  BOOST_TEST(std::distance(fs::directory_iterator(folder.path), fs::directory_iterator()) ==
             1);  // no temporary
}

// The step a checkpoint's metadata holds: digits only (review: "-5" resumed at step -5, "2.5" and
// " 2" at 2, and a file without a step gave "map::at").
BOOST_AUTO_TEST_CASE(a_checkpoint_step_is_a_whole_number_or_an_error_naming_the_file) {
  BOOST_TEST(support::checkpoint_step({{"step", "200"}}, "f.safetensors") == 200);
  BOOST_TEST(support::checkpoint_step({{"step", "0"}}, "f.safetensors") == 0);
  for (const std::string bad : {"-5", "2.5", " 2", "2 ", "+2", "abc", "", "99999999999999999999"}) {
    BOOST_TEST_CONTEXT("step '" << bad << "'") {
      check_throws<std::runtime_error>(
          [&] {
            support::checkpoint_step({{"step", bad}}, "f.safetensors");
          },
          "f.safetensors: its 'step' metadata is '" + bad + "'");
    }
  }
  check_throws<std::runtime_error>([] { support::checkpoint_step({}, "w.safetensors"); },
                                   "w.safetensors has no 'step' in its metadata");
}

BOOST_AUTO_TEST_CASE(helpers_refuse_bad_input_naming_the_shapes_or_the_file) {
  TempFolder folder;
  check_throws<std::invalid_argument>(
      [&] {
        support::write_csv((folder.path / "a.csv").string(), {{"step", {1, 2}}, {"loss", {0.5}}});
      },
      "column 'loss' has 1 values but column 'step' has 2");
  check_throws<std::runtime_error>(
      [&] { support::write_csv((folder.path / "no/such/folder.csv").string(), support::LossHistory{}); },
      "cannot write");
  check_throws<std::invalid_argument>([&] { support::grid_around(zeros({4, 3}), 10); }, "got [4, 3]");
  const support::Grid grid = support::grid_around(zeros({4, 2}), 10);
  check_throws<std::invalid_argument>(
      [&] {
        support::write_regions_plot((folder.path / "r.svg").string(), "", grid,
                                    zeros({99}, {.dtype = kInt64}), zeros({4, 2}),
                                    zeros({4}, {.dtype = kInt64}));
      },
      "expected grid classes [100], points [N, 2] and labels [N], got [99], [4, 2] and [4]");
  std::ofstream(folder.path / "three.csv") << "a,b,c\n1,2,3\n";
  check_throws<std::runtime_error>(
      [&] { support::read_loss_history((folder.path / "three.csv").string(), 5); },
      "has 3 columns, expected 2 (step, loss)");
}

BOOST_AUTO_TEST_SUITE_END()

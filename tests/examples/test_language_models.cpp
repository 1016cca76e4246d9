// The course's language models, run as a learner runs them: examples/bigram and examples/gpt
// against their PyTorch twins, tools/reference/bigram_reference.py and gpt_reference.py, whose
// output and records are the fixtures bigram.json and gpt.json (PyTorch 1.13.1).
//
// Each binary runs in a fresh temporary folder; its standard output must be the script's, line
// for line (the evaluation lines at four decimals, the generated text character for character),
// and the training-batch losses (printed with --print-losses) within 1e-4 relative of PyTorch's.
// The untrained model's checkpoint holds PyTorch's initial parameters; a run stopped at a
// checkpoint and resumed prints what the uninterrupted run prints; bad input ends with a message
// and a non-zero exit, leaving no file half-written.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "data/text.hpp"
#include "fixture.hpp"
#include "io/safetensors.hpp"
#include "support.hpp"

using namespace minigrad;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A new, empty folder under the system's temporary folder, removed with everything in it at the end.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "minigrad-lm-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

struct Run {
  int status = -1;
  std::string output;          // stdout, without the --print-losses lines
  std::string errors;          // stderr
  std::vector<double> losses;  // the --print-losses lines, in order
};

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs examples/<program> with `arguments` inside `folder`: stdout and stderr apart.
Run run_example(const std::string& program, const std::string& arguments, const TempFolder& folder) {
  const std::string binary = std::string(MINIGRAD_BINARY_DIR) + "/examples/" + program;
  BOOST_REQUIRE_MESSAGE(fs::exists(binary),
                        "build the example first: cmake --build <build folder> --target " + program);
  const std::string command =
      "cd '" + folder.path.string() + "' && '" + binary + "' " + arguments + " > stdout.txt 2> stderr.txt";
  const int status = std::system(command.c_str());
  Run run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(read_file(folder.file("stdout.txt")));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("loss ")) {
      run.losses.push_back(std::stod(line.substr(line.rfind(' ') + 1)));
    } else {
      run.output += line + "\n";
    }
  }
  run.errors = read_file(folder.file("stderr.txt"));
  fs::remove(folder.file("stdout.txt"));
  fs::remove(folder.file("stderr.txt"));
  return run;
}

const json& gpt_run(const std::string& name) {
  for (const json& run : minigrad_test::read_fixture("gpt.json").at("runs"))
    if (run.at("name") == name) return run;
  throw std::runtime_error("gpt.json has no run " + name);
}

const json& bigram_run(const std::string& name) {
  for (const json& run : minigrad_test::read_fixture("bigram.json").at("runs"))
    if (run.at("name") == name) return run;
  throw std::runtime_error("bigram.json has no run " + name);
}

// What the script printed: its lines, each ended by a newline (the last is the generated text).
std::string printed(const json& run) {
  std::string text;
  for (const json& line : run.at("output")) text += line.get<std::string>() + "\n";
  return text;
}

// The flags of a fixture run's configuration, spelt as the scripts spell them: --batch-size 8 ...
std::string flags(const json& run) {
  std::string text;
  for (const auto& [key, value] : run.at("config").items()) {
    std::string name = key;
    for (char& ch : name) ch = ch == '_' ? '-' : ch;
    text += " --" + name + " " + value.dump();
  }
  if (run.contains("generate_eval") && run.at("generate_eval").get<bool>()) text += " --eval-mode";
  return text;
}

// Every loss within 1e-4 relative of PyTorch's; reports the largest difference.
void check_losses(const std::vector<double>& got, const json& want_json) {
  const auto want = want_json.get<std::vector<double>>();
  BOOST_TEST_REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double difference = std::abs(got[i] / want[i] - 1);
    BOOST_TEST(difference <= 1e-4, "step " << i + 1 << ": loss " << got[i] << ", PyTorch " << want[i]);
    worst = std::max(worst, difference);
  }
  BOOST_TEST_MESSAGE("largest relative difference from PyTorch's losses: " << worst);
}

using minigrad_test::contains;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) lines.push_back(line);
  return lines;
}

// After training steps, an evaluation line holds means of losses that may differ from PyTorch's in
// the fifth significant digit (the 1e-4 of the losses), which its fourth decimal can show: each
// number within 1e-4 relative plus one unit of the last printed digit. Every other line, the
// step-0 evaluation and the generated text included, is compared exactly.
void check_printed_after_training(const std::string& got, const json& want_run) {
  const std::vector<std::string> got_lines = split_lines(got);
  const std::vector<std::string> want_lines = split_lines(printed(want_run));
  BOOST_TEST_REQUIRE(got_lines.size() == want_lines.size(), got);
  const std::regex evaluation(R"(step (\d+): train loss ([0-9.]+), val loss ([0-9.]+))");
  for (size_t i = 0; i < got_lines.size(); ++i) {
    std::smatch g;
    std::smatch w;
    const bool later_evaluation = std::regex_match(want_lines[i], w, evaluation) && w[1] != "0" &&
                                  std::regex_match(got_lines[i], g, evaluation);
    if (!later_evaluation) {
      BOOST_TEST(got_lines[i] == want_lines[i]);
      continue;
    }
    BOOST_TEST(g[1] == w[1]);
    for (int k : {2, 3}) {
      const double a = std::stod(g[k]), b = std::stod(w[k]);
      BOOST_TEST(std::abs(a - b) <= 1e-4 * b + 1e-4, got_lines[i] << " vs PyTorch's " << want_lines[i]);
    }
  }
}

// A GPT small enough to train two steps in a test of flags and files.
const std::string kSmallRun =
    " --batch-size 2 --block-size 8 --n-embd 16 --n-head 2 --n-layer 1 --eval-iters 1 "
    "--max-iters 2 --max-new-tokens 5";

}  // namespace

BOOST_AUTO_TEST_SUITE(language_models)

BOOST_AUTO_TEST_CASE(bigram_prints_bigram_py_evaluation_lines_and_sample) {
  TempFolder folder;
  const Run run = run_example("bigram", "", folder);
  BOOST_TEST_REQUIRE(run.status == 0, run.errors);
  BOOST_TEST(run.output == printed(bigram_run("course")));
}

BOOST_AUTO_TEST_CASE(untrained_gpt_has_pytorchs_parameters_and_generates_its_text_in_train_mode) {
  TempFolder folder;
  const json& want = gpt_run("course_init");
  const Run run = run_example("gpt", flags(want), folder);
  BOOST_TEST_REQUIRE(run.status == 0, run.errors);
  BOOST_TEST(run.output == printed(want));  // "0.816705 M parameters", then the 100 characters
  const std::string& sample = want.at("output").back().get<std::string>();
  BOOST_TEST(read_file(folder.file("gpt_sample.txt")) == sample + "\n");

  // The checkpoint of --max-iters 0 holds the untrained model: each tensor as PyTorch drew it.
  const nn::NamedTensors saved = load_file(folder.file("gpt.safetensors"));
  int64_t count = 0;
  for (const json& p : want.at("initial")) {
    const std::string name = "model." + p.at("name").get<std::string>();
    BOOST_TEST_CONTEXT(name) {
      auto found =
          std::find_if(saved.begin(), saved.end(), [&](const auto& entry) { return entry.first == name; });
      BOOST_TEST_REQUIRE((found != saved.end()));
      const Tensor& t = found->second;
      BOOST_TEST(t.shape() == Shape(p.at("shape").get<std::vector<int64_t>>()));
      const std::vector<double> values = t.to_vector<double>();
      const auto head = p.at("head").get<std::vector<double>>();
      const auto tail = p.at("tail").get<std::vector<double>>();
      BOOST_TEST(std::vector<double>(values.begin(), values.begin() + head.size()) == head,
                 boost::test_tools::per_element());
      BOOST_TEST(std::vector<double>(values.end() - tail.size(), values.end()) == tail,
                 boost::test_tools::per_element());
      double sum = 0, squares = 0;
      for (double v : values) sum += v, squares += v * v;
      BOOST_TEST(sum == p.at("sum").get<double>(), boost::test_tools::tolerance(1e-9));
      BOOST_TEST(squares == p.at("sum_of_squares").get<double>(), boost::test_tools::tolerance(1e-12));
      count += t.numel();
    }
  }
  BOOST_TEST(count == want.at("parameters").get<int64_t>());
  BOOST_TEST(count == 816705);

  // Its generator state is PyTorch's after the initialisation: drawn from it, the first batches
  // (the step-0 evaluation's) start where PyTorch's start.
  auto state =
      std::find_if(saved.begin(), saved.end(), [](const auto& entry) { return entry.first == "rng_state"; });
  BOOST_TEST_REQUIRE((state != saved.end()));
  set_rng_state(state->second);
  const std::string text = data::read_text(std::string(MINIGRAD_SOURCE_DIR) + "/assets/tinyshakespeare.txt");
  data::CharVocab vocab(text);
  const Tensor tokens = vocab.encode_tensor(text);
  const Tensor train_data = tokens.slice(0, 0, tokens.size(0) * 9 / 10);
  for (const json& batch : gpt_run("course_50").at("batches")) {
    BOOST_TEST_REQUIRE(batch.at("split") == "train");
    auto [x, y] = data::get_batch(train_data, 32, 64);
    const auto ix = batch.at("ix").get<std::vector<int64_t>>();
    for (int64_t b = 0; b < 32; ++b) {
      BOOST_TEST(equal(x[b], train_data.slice(0, ix[b], ix[b] + 64)),
                 "batch row " << b << " does not start at " << ix[b]);
    }
  }
}

BOOST_AUTO_TEST_CASE(untrained_gpt_generates_pytorchs_text_in_eval_mode) {
  TempFolder folder;
  const json& want = gpt_run("course_init_eval");
  const Run run = run_example("gpt", flags(want), folder);
  BOOST_TEST_REQUIRE(run.status == 0, run.errors);
  BOOST_TEST(run.output == printed(want));
}

BOOST_AUTO_TEST_CASE(small_gpt_prints_pytorchs_lines_and_losses_for_30_steps) {
  for (const std::string name : {"small", "small_eval"}) {
    BOOST_TEST_CONTEXT(name) {
      TempFolder folder;
      const json& want = gpt_run(name);
      const Run run = run_example("gpt", flags(want) + " --print-losses", folder);
      BOOST_TEST_REQUIRE(run.status == 0, run.errors);
      BOOST_TEST(run.output == printed(want));
      check_losses(run.losses, want.at("losses"));
      BOOST_TEST(fs::exists(folder.file("gpt_loss.svg")));
    }
  }
}

BOOST_AUTO_TEST_CASE(course_size_gpt_gives_pytorchs_first_50_losses_with_dropout) {
  TempFolder folder;
  const json& want = gpt_run("course_50");
  const Run run = run_example("gpt", flags(want) + " --print-losses", folder);
  BOOST_TEST_REQUIRE(run.status == 0, run.errors);
  check_losses(run.losses, want.at("losses"));
  check_printed_after_training(run.output, want);  // step 0 and step 49 lines, then the text
}

BOOST_AUTO_TEST_CASE(a_run_stopped_at_a_checkpoint_and_resumed_prints_what_the_uninterrupted_run_prints) {
  const json& want = gpt_run("small");
  TempFolder straight;
  const Run whole = run_example("gpt", flags(want) + " --print-losses", straight);
  BOOST_TEST_REQUIRE(whole.status == 0, whole.errors);

  TempFolder stopped;
  const Run first = run_example("gpt", flags(want) + " --print-losses --stop-at 10", stopped);
  BOOST_TEST_REQUIRE(first.status == 0, first.errors);
  BOOST_TEST(contains(first.output, "stopped at step 10"));
  BOOST_TEST(!fs::exists(stopped.file("gpt_sample.txt")));
  // Regression: a --stop-at at or before the resumed step was ignored and the run went to its end.
  const std::string saved = read_file(stopped.file("gpt.safetensors"));
  const Run early = run_example("gpt", flags(want) + " --print-losses --resume --stop-at 10", stopped);
  BOOST_TEST(early.status != 0);
  BOOST_TEST(contains(early.errors, "--stop-at 10 is not after step 10, where gpt.safetensors resumes"),
             early.errors);
  BOOST_TEST(read_file(stopped.file("gpt.safetensors")) == saved);
  {  // Review: a run that ended at step 8 saved it unevaluated; a longer resume evaluates it, and may stop
     // there.
    TempFolder ended;
    BOOST_TEST_REQUIRE(run_example("gpt", kSmallRun + " --max-iters 8 --eval-interval 4", ended).status == 0);
    const Run longer =
        run_example("gpt", kSmallRun + " --max-iters 12 --eval-interval 4 --resume --stop-at 8", ended);
    BOOST_TEST(longer.status == 0, longer.errors);
    BOOST_TEST(contains(longer.output, "stopped at step 8"), longer.output);
  }
  const Run second = run_example("gpt", flags(want) + " --print-losses --resume", stopped);
  BOOST_TEST_REQUIRE(second.status == 0, second.errors);
  BOOST_TEST(contains(second.output, "resuming from gpt.safetensors at step 10\n"));

  // The losses of steps 1..10, then 11..30, are the uninterrupted run's, bit for bit.
  std::vector<double> losses = first.losses;
  losses.insert(losses.end(), second.losses.begin(), second.losses.end());
  BOOST_TEST(losses == whole.losses, boost::test_tools::per_element());
  // What follows the resume line is what the uninterrupted run printed after its step 10 line.
  const std::string after_resume =
      second.output.substr(second.output.find("\n", second.output.find("resuming")) + 1);
  const std::string after_step_10 =
      whole.output.substr(whole.output.find("\n", whole.output.find("step 10:")) + 1);
  BOOST_TEST(after_resume == after_step_10);
  BOOST_TEST(read_file(stopped.file("gpt_sample.txt")) == read_file(straight.file("gpt_sample.txt")));
}

// Regression: a run resumed with another --learning-rate noted that it used its own rate but
// trained on with the saved one (the optimizer's state dict brought the old lr back).
BOOST_AUTO_TEST_CASE(a_resumed_run_trains_with_its_own_learning_rate_as_its_note_says) {
  const json& want = gpt_run("small");
  const std::string saved = flags(want);
  std::string other = saved;
  const std::string rate = " --learning-rate 0.0003";
  BOOST_TEST_REQUIRE(other.find(rate) != std::string::npos, other);
  other.replace(other.find(rate), rate.size(), " --learning-rate 0.01");

  TempFolder straight, stopped;
  const Run whole = run_example("gpt", saved + " --print-losses", straight);
  BOOST_TEST_REQUIRE(run_example("gpt", saved + " --print-losses --stop-at 10", stopped).status == 0);
  const Run resumed = run_example("gpt", other + " --print-losses --resume", stopped);
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.errors);
  BOOST_TEST(contains(resumed.errors, "written with --learning-rate 3e-04, this run uses 0.01"),
             resumed.errors);
  // Step 11's loss comes from the weights of the first 10 steps; step 12's from a step at the new rate.
  BOOST_TEST_REQUIRE(resumed.losses.size() >= 2u);
  BOOST_TEST_REQUIRE(whole.losses.size() >= 12u);
  BOOST_TEST(resumed.losses[0] == whole.losses[10]);
  BOOST_TEST(resumed.losses[1] != whole.losses[11]);
}

struct BadRun {
  const char* what;
  std::string arguments;
  std::string message;  // a part of stderr
};

BOOST_AUTO_TEST_CASE(bad_input_ends_with_a_message_and_a_non_zero_exit_leaving_no_file) {
  const std::string small = kSmallRun;
  const std::vector<BadRun> cases{
      {"missing text", "--input no/such.txt", "cannot open 'no/such.txt'"},
      {"missing text says where it comes from", "--input no/such.txt", "assets/tinyshakespeare.txt"},
      {"heads do not divide the width", "--n-embd 30 --n-head 4",
       "--n-embd 30 is not divisible by --n-head 4"},
      {"block larger than the split", "--block-size 200000", "--block-size 200000 is too large"},
      {"prompt outside the vocabulary", "--prompt 'a#b'",
       "character '#' at position 1 is not in the vocabulary"},
      {"unwritable checkpoint folder", small + " --checkpoint no/such/folder/gpt.safetensors",
       "no/such/folder"},
      {"resume without a checkpoint", small + " --resume", "gpt.safetensors"},
      {"n_embd of zero", "--n-embd 0", "--n-embd"},
      {"an infinite learning rate (it trained on nan)", small + " --learning-rate inf",
       "--learning-rate: inf is not a finite number above 0"},
      // Review: --input my.txt --output my.txt replaced the text with the sample; found before
      // anything is read or written now.
      {"the output in place of the text", small + " --input text.txt --output text.txt",
       "--output text.txt is also the --input file"},
      {"the plot in place of the checkpoint", small + " --plot ./gpt.safetensors",
       "--plot ./gpt.safetensors is also the --checkpoint file"},
      {"a missing output folder, found before training", small + " --output no/such/sample.txt",
       "--output no/such/sample.txt: its folder does not exist"},
      {"a stop at a step without a checkpoint (it was ignored)",
       small + " --max-iters 8 --eval-interval 4 --stop-at 3",
       "--stop-at 3 is not a step this run evaluates and checkpoints"},
      {"a stop beyond the run", small + " --stop-at 2", "--stop-at 2 is not a step this run evaluates"},
      {"a negative stop (it was ignored)", small + " --stop-at -4",
       "--stop-at: needs a whole number of at least 0, got '-4'"},
  };
  for (const BadRun& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      TempFolder folder;
      const Run run = run_example("gpt", c.arguments, folder);
      BOOST_TEST(run.status != 0);
      BOOST_TEST(contains(run.errors, c.message), "stderr: " << run.errors);
      BOOST_TEST(fs::is_empty(folder.path), "files were left behind");
    }
  }
}

// Review: `gpt` and then `gpt --max-iters 0`, as this README shows them, replaced the trained
// checkpoint with the untrained one. A new run now leaves an earlier run's checkpoint alone
// unless given --overwrite (or --resume, which continues it).
BOOST_AUTO_TEST_CASE(a_new_run_does_not_replace_an_earlier_runs_checkpoint_unless_told_to) {
  const std::string small = kSmallRun;
  TempFolder folder;
  BOOST_TEST_REQUIRE(run_example("gpt", small, folder).status == 0);
  const std::string trained = read_file(folder.file("gpt.safetensors"));
  Run run = run_example("gpt", small + " --max-iters 0", folder);
  BOOST_TEST(run.status != 0);
  BOOST_TEST(contains(run.errors, "--checkpoint gpt.safetensors exists (an earlier run saved it)"),
             run.errors);
  BOOST_TEST(read_file(folder.file("gpt.safetensors")) == trained);
  run = run_example("gpt", small + " --max-iters 0 --overwrite", folder);
  BOOST_TEST(run.status == 0, run.errors);
  BOOST_TEST(read_file(folder.file("gpt.safetensors")) != trained);
}

// gpt.py starts generating from token 0 (torch.zeros((1, 1))), whatever the text; a newline was
// encoded instead, which a text without one refused ("character '\n' ... is not in the vocabulary").
BOOST_AUTO_TEST_CASE(without_a_prompt_generation_starts_from_token_0_as_the_script) {
  TempFolder folder;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "cab ";  // no newline; token 0 is ' ', then 'a', 'b', 'c'
  std::ofstream(folder.file("text.txt")) << text;
  const Run run = run_example(
      "gpt",
      "--input text.txt --batch-size 2 --block-size 8 --n-embd 16 --n-head 2 --n-layer 1 --eval-iters 1 "
      "--max-iters 1 --max-new-tokens 5",
      folder);
  BOOST_TEST_REQUIRE(run.status == 0, run.errors);
  const std::string sample = read_file(folder.file("gpt_sample.txt"));
  BOOST_TEST(sample.size() == 7u);  // token 0, five new ones, the newline
  BOOST_TEST(sample.front() == ' ');
}

BOOST_AUTO_TEST_CASE(a_bad_checkpoint_is_refused_with_what_is_wrong_and_left_as_it_was) {
  const std::string small = kSmallRun;
  TempFolder folder;
  BOOST_TEST_REQUIRE(run_example("gpt", small, folder).status == 0);
  const std::string checkpoint = read_file(folder.file("gpt.safetensors"));
  fs::remove(folder.file("gpt_sample.txt"));

  // Another configuration: the tensor is named, with both shapes.
  Run run = run_example("gpt", small + " --n-embd 32 --max-iters 4 --resume", folder);
  BOOST_TEST(run.status != 0);
  BOOST_TEST(contains(run.errors,
                      "size mismatch for \"token_embedding_table.weight\": [65, 16] in the state dict, "
                      "[65, 32] in the module"),
             run.errors);
  BOOST_TEST(read_file(folder.file("gpt.safetensors")) == checkpoint);
  BOOST_TEST(!fs::exists(folder.file("gpt_sample.txt")));

  // Truncated, and not a checkpoint at all.
  std::ofstream(folder.file("gpt.safetensors"), std::ios::binary)
      << checkpoint.substr(0, checkpoint.size() / 2);
  run = run_example("gpt", small + " --max-iters 4 --resume", folder);
  BOOST_TEST(run.status != 0);
  BOOST_TEST(contains(run.errors, "gpt.safetensors"), run.errors);
  std::ofstream(folder.file("gpt.safetensors"), std::ios::binary)
      << "First Citizen:\nBefore we proceed any further";
  run = run_example("gpt", small + " --max-iters 4 --resume", folder);
  BOOST_TEST(run.status != 0);
  BOOST_TEST(contains(run.errors, "gpt.safetensors"), run.errors);
  BOOST_TEST(!fs::exists(folder.file("gpt_sample.txt")));
}

BOOST_AUTO_TEST_SUITE_END()

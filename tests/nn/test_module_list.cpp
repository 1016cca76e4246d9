// Tests for the module tree the course's GPT needs: nn::ModuleList, buffers (persistent or not),
// Module::apply and as<T>(), Module::to(dtype), Linear without bias, and checkpoints that carry
// buffers and the generator's state. The course-shaped Model below is the one
// tools/reference/modules_random_reference.py builds in PyTorch (a ModuleList of heads with a
// `tril` buffer, bias-free Linears, nested in a Sequential); its names, printout, apply order and
// seeded values are compared with tests/fixtures/modules_random.json.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "io/safetensors.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/module_list.hpp"
#include "nn/sequential.hpp"

namespace {

using namespace minigrad;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::json;

// The lower triangle of ones [n, n], what torch.tril(torch.ones(n, n)) holds.
Tensor lower_triangle(int64_t n) {
  std::vector<float> values(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) values[i * n + j] = 1.0f;
  return tensor(values, {n, n});
}

struct Head : nn::Module {
  nn::Linear& key;
  nn::Linear& query;
  nn::Linear& value;
  Tensor& tril;
  Head(int64_t n_embd, int64_t head_size, int64_t block_size)
      : key(register_module("key", nn::Linear(n_embd, head_size, /*bias=*/false))),
        query(register_module("query", nn::Linear(n_embd, head_size, false))),
        value(register_module("value", nn::Linear(n_embd, head_size, false))),
        tril(register_buffer("tril", lower_triangle(block_size))) {}
};

nn::ModuleList make_heads(int64_t n_embd, int64_t n_head, int64_t block_size) {
  nn::ModuleList heads;
  for (int64_t i = 0; i < n_head; ++i) heads.append(Head(n_embd, n_embd / n_head, block_size));
  return heads;
}

struct MultiHeadAttention : nn::Module {
  nn::ModuleList& heads;
  nn::Linear& proj;
  nn::Dropout& dropout;
  MultiHeadAttention(int64_t n_embd, int64_t n_head, int64_t block_size)
      : heads(register_module("heads", make_heads(n_embd, n_head, block_size))),
        proj(register_module("proj", nn::Linear(n_embd, n_embd))),
        dropout(register_module("dropout", nn::Dropout(0.2))) {}
};

struct Block : nn::Module {
  MultiHeadAttention& sa;
  nn::Sequential& ffwd;
  Block(int64_t n_embd, int64_t n_head, int64_t block_size)
      : sa(register_module("sa", MultiHeadAttention(n_embd, n_head, block_size))),
        ffwd(register_module("ffwd", nn::Sequential{nn::Linear(n_embd, 4 * n_embd), nn::ReLU(),
                                                    nn::Linear(4 * n_embd, n_embd), nn::Dropout(0.2)})) {
    register_buffer("steps", zeros({}, {.dtype = kInt64}));
    register_buffer("scratch", zeros({2}), /*persistent=*/false);
  }
};

struct Model : nn::Module {
  nn::Sequential& blocks;
  nn::Linear& lm_head;
  Model(int64_t n_embd = 8, int64_t n_head = 2, int64_t block_size = 4, int64_t vocab = 5)
      : blocks(register_module(
            "blocks", nn::Sequential{Block(n_embd, n_head, block_size), Block(n_embd, n_head, block_size)})),
        lm_head(register_module("lm_head", nn::Linear(n_embd, vocab))) {}
};

// gpt.py's _init_weights, for the modules this model has.
void init_weights(nn::Module& module) {
  if (auto* linear = module.as<nn::Linear>()) {
    NoGradGuard no_grad;
    linear->weight.normal_(0.0, 0.02);
    if (linear->bias.defined()) linear->bias.zero_();
  }
}

const json& modules_case() {
  for (const json& c : minigrad_test::read_fixture("modules_random.json")["cases"])
    if (c["kind"] == "modules") return c;
  throw std::runtime_error("modules_random.json has no modules case");
}

std::vector<std::string> strings(const json& list) { return list.get<std::vector<std::string>>(); }

template <typename Named>
std::vector<std::string> names_of(const Named& named) {
  std::vector<std::string> names;
  for (const auto& [name, value] : named) names.push_back(name);
  return names;
}

// Every state_dict() entry equals PyTorch's record of it exactly: dtype, shape and values.
void check_state(const nn::StateDict& state, const json& expected) {
  BOOST_TEST_REQUIRE(state.size() == expected.size());
  for (const auto& [name, t] : state) {
    BOOST_TEST_CONTEXT(name) {
      const json& record = expected.at(name);
      BOOST_TEST(dtype_name(t.dtype()) == record["dtype"].get<std::string>());
      BOOST_TEST(t.shape() == Shape(record["shape"].get<std::vector<int64_t>>()));
      check_close(t, record["values"], 0.0, name);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module_list)

BOOST_AUTO_TEST_CASE(course_model_state_dict_names_match_pytorch_buffers_included) {
  Model model;
  const json& c = modules_case();
  BOOST_TEST(names_of(model.state_dict()) == strings(c["state_dict_names"]),
             boost::test_tools::per_element());
  BOOST_TEST(names_of(model.named_parameters()) == strings(c["named_parameters"]),
             boost::test_tools::per_element());
  BOOST_TEST(names_of(model.named_buffers()) == strings(c["named_buffers"]),
             boost::test_tools::per_element());
  BOOST_TEST(model.buffers().size() == c["named_buffers"].size());
}

BOOST_AUTO_TEST_CASE(course_model_prints_as_pytorch_with_bias_free_linears) {
  BOOST_TEST(to_string(Model()) == modules_case()["repr"].get<std::string>());
}

BOOST_AUTO_TEST_CASE(apply_visits_children_before_parents_in_pytorch_order) {
  Model model;
  std::vector<std::string> visits;
  nn::Module& returned = model.apply([&](nn::Module& m) { visits.push_back(m.path()); });
  BOOST_TEST(visits == strings(modules_case()["apply_order"]), boost::test_tools::per_element());
  BOOST_TEST(&returned == &model);
}

BOOST_AUTO_TEST_CASE(course_model_matches_pytorch_seed_1337_when_built_and_after_apply_init_weights) {
  const json& c = modules_case();
  manual_seed(c["seed"].get<uint64_t>());
  Model model;
  check_state(model.state_dict(), c["built"]);
  model.apply(init_weights);
  check_state(model.state_dict(), c["initialised"]);
}

BOOST_AUTO_TEST_CASE(as_returns_the_module_as_its_type_or_nullptr) {
  Model model;
  nn::Module& head = model.blocks.at<Block>(0).sa.heads[1];
  BOOST_TEST(head.as<Head>() == &model.blocks.at<Block>(0).sa.heads.at<Head>(1));
  BOOST_TEST(head.as<nn::Linear>() == nullptr);
  const nn::Module& key = model.blocks.at<Block>(1).sa.heads.at<Head>(0).key;
  BOOST_TEST(key.as<nn::Linear>()->out_features == 4);
  BOOST_TEST(key.as<nn::Sequential>() == nullptr);
}

BOOST_AUTO_TEST_CASE(to_double_converts_floating_parameters_and_buffers_in_place) {
  manual_seed(3);
  Model model;
  const nn::StateDict before = model.state_dict();
  Tensor weight = model.lm_head.weight;            // a handle held outside the module sees the conversion
  (model.lm_head(ones({1, 8})).sum()).backward();  // a gradient to convert too

  nn::Module& returned = model.double_();
  BOOST_TEST(&returned == &model);
  for (const auto& [name, t] : model.state_dict())
    BOOST_TEST(dtype_name(t.dtype()) == modules_case()["double_dtypes"][name].get<std::string>(), name);
  BOOST_TEST(model.named_buffers()[1].second.dtype() == kFloat64);  // blocks.0.scratch, not in state_dict
  BOOST_TEST(weight.dtype() == kFloat64);
  BOOST_TEST(weight.requires_grad());
  BOOST_TEST(weight.grad().dtype() == kFloat64);
  BOOST_TEST(weight.grad().equal(ones({5, 8}, {.dtype = kFloat64})));  // d(sum of x W^T)/dW = 1 for x = 1
  for (size_t i = 0; i < before.size(); ++i)
    BOOST_TEST(model.state_dict()[i].second.equal(before[i].second.to(model.state_dict()[i].second.dtype())));
  BOOST_TEST(model.lm_head(ones({2, 8}, {.dtype = kFloat64})).dtype() == kFloat64);

  model.float_();
  BOOST_TEST(weight.dtype() == kFloat32);
  BOOST_TEST(weight.equal(before[before.size() - 2].second));  // lm_head.weight, back exactly
}

BOOST_AUTO_TEST_CASE(to_refuses_a_dtype_that_is_not_floating) {
  Model model;
  check_throws<std::invalid_argument>([&] { model.to(kInt64); }, {"Module::to", "int64"});
  check_throws<std::invalid_argument>([&] { model.to(kBool); }, {"Module::to", "bool"});
}

BOOST_AUTO_TEST_CASE(module_list_indexes_from_either_end_and_iterates_in_order) {
  nn::ModuleList list{nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 1, false)};
  BOOST_TEST(list.size() == 3);
  BOOST_TEST(&list[-1] == &list[2]);
  BOOST_TEST(&list[-3] == &list[0]);
  BOOST_TEST(list.at<nn::Linear>(2).in_features == 3);
  std::vector<std::string> names;
  for (nn::Module& m : list) names.push_back(m.name());
  BOOST_TEST(names == (std::vector<std::string>{"Linear", "ReLU", "Linear"}),
             boost::test_tools::per_element());
  BOOST_TEST(
      names_of(list.named_parameters()) == (std::vector<std::string>{"0.weight", "0.bias", "2.weight"}),
      boost::test_tools::per_element());
  nn::ModuleList& chained = list.append(nn::ReLU()).append(nn::ReLU());
  BOOST_TEST(&chained == &list);
  BOOST_TEST(names_of(list.named_children()).back() == "4");
}

BOOST_AUTO_TEST_CASE(module_list_builds_its_members_in_brace_order) {
  manual_seed(11);
  nn::ModuleList list{nn::Linear(3, 2), nn::Linear(2, 2)};
  manual_seed(11);
  nn::Linear first(3, 2);
  nn::Linear second(2, 2);
  BOOST_TEST(list.at<nn::Linear>(0).weight.equal(first.weight));
  BOOST_TEST(list.at<nn::Linear>(1).weight.equal(second.weight));
}

BOOST_AUTO_TEST_CASE(module_list_rejects_an_index_out_of_range_and_a_wrong_type) {
  nn::ModuleList list{nn::ReLU(), nn::ReLU()};
  check_throws<std::out_of_range>([&] { (void)list[2]; },
                                  {"ModuleList: index 2 is out of range for 2 modules"});
  check_throws<std::out_of_range>([&] { (void)list[-3]; },
                                  {"ModuleList: index -3 is out of range for 2 modules"});
  check_throws<std::out_of_range>([&] { (void)nn::ModuleList()[0]; },
                                  {"index 0 is out of range for 0 modules"});
  check_throws<std::invalid_argument>([&] { (void)list.at<nn::Linear>(0); },
                                      {"module 0 is a ReLU, not a Linear"});
  check_throws<std::logic_error>([&] { list(ones({1})); }, {"Module [ModuleList]", "forward"});
}

BOOST_AUTO_TEST_CASE(a_dotted_name_is_refused_with_a_hint_to_use_module_list) {
  nn::Module m;
  check_throws<std::invalid_argument>([&] { m.register_module("heads.0", nn::ReLU()); },
                                      {"\"heads.0\" must not contain '.'", "nn::ModuleList"});
}

BOOST_AUTO_TEST_CASE(non_persistent_buffers_are_listed_but_not_saved) {
  Block block(4, 2, 3);
  const auto buffers = names_of(block.named_buffers());
  BOOST_TEST(buffers == (std::vector<std::string>{"steps", "scratch", "sa.heads.0.tril", "sa.heads.1.tril"}),
             boost::test_tools::per_element());
  const auto saved = names_of(block.state_dict());
  BOOST_TEST(std::count(saved.begin(), saved.end(), "scratch") == 0);
  BOOST_TEST(std::count(saved.begin(), saved.end(), "steps") == 1);
}

BOOST_AUTO_TEST_CASE(register_buffer_returns_the_registered_handle_which_survives_a_move) {
  Head head(4, 2, 3);
  BOOST_TEST(head.tril.equal(lower_triangle(3)));
  head.register_buffer("more", zeros({1}));  // registering more buffers leaves the reference valid
  Head moved = std::move(head);
  NoGradGuard no_grad;
  moved.tril.fill_(7.0);
  BOOST_TEST(moved.named_buffers()[0].second.equal(full({3, 3}, 7.0)));
  BOOST_TEST(!moved.tril.requires_grad());
}

BOOST_AUTO_TEST_CASE(register_buffer_rejects_a_clash_and_a_tensor_that_requires_grad) {
  Head head(4, 2, 3);
  check_throws<std::invalid_argument>(
      [&] { head.register_buffer("key", zeros({1})); },
      {"register_buffer", "already has a member named \"key\" (a child module)"});
  check_throws<std::invalid_argument>([&] { head.register_buffer("tril", zeros({1})); },
                                      {"already has a member named \"tril\" (a buffer)"});
  nn::Linear linear(2, 2);
  check_throws<std::invalid_argument>([&] { linear.register_buffer("weight", zeros({1})); },
                                      {"already has a member named \"weight\" (a parameter)"});
  check_throws<std::invalid_argument>([&] { head.register_buffer("w", zeros({1}, {.requires_grad = true})); },
                                      {"register_buffer", "\"w\" requires grad"});
}

BOOST_AUTO_TEST_CASE(a_checkpoint_restores_buffers_and_the_generator_stream) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "minigrad_modules_random.safetensors").string();
  manual_seed(1337);
  Model model;
  NoGradGuard no_grad;
  model.blocks.at<Block>(0).sa.heads.at<Head>(1).tril.fill_(2.0);  // a buffer value a checkpoint must keep
  randn({3});  // mid-run: a cached normal sample and a position inside the 624 words
  nn::NamedTensors checkpoint = model.state_dict();
  checkpoint.emplace_back("rng_state", get_rng_state());
  save_file(checkpoint, path);
  const Tensor expected = cat({randn({5}), rand({700}), multinomial(ones({65}), 1).to(kFloat32)});

  manual_seed(0);
  Model resumed;
  nn::NamedTensors loaded = load_file(path);
  std::filesystem::remove(path);
  Tensor rng_state;
  nn::StateDict state;
  for (const auto& [name, t] : loaded) {
    if (name == "rng_state") {
      rng_state = t;
    } else {
      state.emplace_back(name, t);
    }
  }
  resumed.load_state_dict(state);
  set_rng_state(rng_state);
  BOOST_TEST(cat({randn({5}), rand({700}), multinomial(ones({65}), 1).to(kFloat32)}).equal(expected));
  BOOST_TEST(resumed.blocks.at<Block>(0).sa.heads.at<Head>(1).tril.equal(full({4, 4}, 2.0)));
  BOOST_TEST(resumed.lm_head.weight.equal(model.lm_head.weight));
}

BOOST_AUTO_TEST_SUITE_END()

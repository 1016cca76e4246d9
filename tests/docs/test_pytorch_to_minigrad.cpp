// docs/pytorch_to_minigrad.md cannot go stale: each "## Section" of its table has a section of this
// file below (marked `// ==== table: Section ====`) whose test case compiles and runs every C++
// spelling of that table section, and a first test fails when a spelling of the table does not
// appear, character for character (spaces aside), in its section here. The assertions check what
// each call returns against values worked out by hand.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "docs/docs_support.hpp"
#include "minigrad.hpp"

using namespace minigrad;
using namespace docs_support;
namespace F = minigrad::nn::functional;

BOOST_AUTO_TEST_SUITE(pytorch_to_minigrad)

BOOST_AUTO_TEST_CASE(every_cpp_spelling_of_the_pytorch_table_is_in_its_section_of_this_test) {
  // This file, cut at its "table:" marker comments into one section per heading of the table.
  const std::string marker = "// ==== table: ";
  std::map<std::string, std::string> sections;
  std::string current;
  for (const std::string& line :
       split_lines(read_text(kSource / "tests/docs/test_pytorch_to_minigrad.cpp"))) {
    if (starts_with(line, marker))
      current = line.substr(marker.size(), line.find(" ====", marker.size()) - marker.size());
    if (!current.empty()) sections[current] += line + "\n";
  }
  std::set<std::string> headings;
  std::string heading;
  const std::regex code_span("`([^`]+)`");
  for (const std::string& line : split_lines(read_text(kSource / "docs/pytorch_to_minigrad.md"))) {
    if (starts_with(line, "## ")) {
      heading = line.substr(3);
      headings.insert(heading);
      BOOST_TEST(sections.contains(heading), "no section \"" << marker << heading << " ====\" in this test");
    }
    if (!starts_with(line, "| `") || heading.empty() || !sections.contains(heading)) continue;
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    BOOST_TEST_REQUIRE(cells.size() >= 3u, "a table row with fewer than 2 cells: " << line);
    const std::string code = squeeze_spaces(sections.at(heading));
    for (std::sregex_iterator it(cells[2].begin(), cells[2].end(), code_span), end; it != end; ++it) {
      const std::string spelling = squeeze_spaces((*it)[1]);
      BOOST_TEST(code.find(spelling) != std::string::npos,
                 heading << ": `" << spelling << "` is not compiled in this test's section");
    }
  }
  for (const auto& [name, text] : sections)
    BOOST_TEST(headings.contains(name), "no table \"## " << name << "\"");
}

// ==== table: Tensors ====
BOOST_AUTO_TEST_CASE(tensor_spellings_run) {
  const Dtype dtypes[] = {kFloat32, kFloat64, kInt64, kBool, kFloat, kDouble, kLong};
  BOOST_TEST((dtypes[4] == dtypes[0] && dtypes[5] == dtypes[1] && dtypes[6] == dtypes[2]));
  Tensor x = tensor({{1, -2, 3}, {4, 5, -6}});
  Tensor y = ones({2, 3});
  BOOST_TEST((x.shape() == Shape{2, 3}));
  BOOST_TEST(x.size(1) == 3);
  BOOST_TEST((x.dim() == 2 && x.numel() == 6 && x.dtype() == kFloat32));
  BOOST_TEST(x[0][1].item<double>() == -2.0);
  BOOST_TEST((x > 0).sum().item<int64_t>() == 4);
  BOOST_TEST(x[0].equal(tensor({1, -2, 3})));
  BOOST_TEST(x.select(1, 1).equal(tensor({-2, 5})));
  BOOST_TEST(x.slice(0, 1, 3).equal(tensor({{4, 5, -6}})));
  BOOST_TEST((x.to(kFloat64).dtype() == kFloat64));
  BOOST_TEST(x.clone().equal(x.detach()));
  BOOST_TEST(x.to_vector<float>() == (std::vector<float>{1, -2, 3, 4, 5, -6}),
             boost::test_tools::per_element());
  std::ostringstream printed;
  std::streambuf* terminal = std::cout.rdbuf(printed.rdbuf());
  std::cout << x << "\n";
  std::cout.rdbuf(terminal);
  BOOST_TEST(printed.str() == "tensor([[ 1., -2.,  3.],\n        [ 4.,  5., -6.]])\n");
  BOOST_TEST(!equal(x, y));
  x.fill_(0.5), x.zero_();
  BOOST_TEST(x.equal(zeros({2, 3})));
  x.copy_(y);
  BOOST_TEST(allclose(x, y, 1e-5, 1e-6));
  x.add_(y, 0.1), x.mul_(0.9);
  BOOST_TEST(x.allclose(full({2, 3}, 0.99)));
  BOOST_TEST(x.version() == 5);  // torch: 5 after fill_, zero_, copy_, add_, mul_
}

// ==== table: Factories ====
BOOST_AUTO_TEST_CASE(factory_spellings_run) {
  BOOST_TEST(zeros({2, 3}).equal(full({2, 3}, 0.0)));
  BOOST_TEST((ones({2, 3}, {.dtype = kFloat64}).dtype() == kFloat64));
  BOOST_TEST(zeros({3}, {.requires_grad = true}).requires_grad());
  BOOST_TEST(full({2, 3}, 7.0).sum().item<double>() == 42.0);
  BOOST_TEST(empty({2, 3}).equal(zeros({2, 3})));
  BOOST_TEST(eye(3).sum().item<double>() == 3.0);
  BOOST_TEST((arange(5).dtype() == kInt64 && arange(5).sum().item<int64_t>() == 10));
  BOOST_TEST(arange(0, 1, 0.25).equal(tensor({0, 0.25, 0.5, 0.75})));
  BOOST_TEST(linspace(0, 1, 5).equal(tensor({0, 0.25, 0.5, 0.75, 1})));
  BOOST_TEST(tensor({{1, 2}, {3, 4}}).sum().item<double>() == 10.0);
  BOOST_TEST((tensor(std::vector<int64_t>{1, 2, 3}, {3}).dtype() == kInt64));
  BOOST_TEST((scalar_tensor(2.5).dim() == 0));
  const Tensor x = eye(2);
  BOOST_TEST(zeros_like(x).equal(zeros({2, 2})));
  BOOST_TEST(ones_like(x).equal(ones({2, 2})));
  BOOST_TEST(full_like(x, 1.5).equal(full({2, 2}, 1.5)));
  BOOST_TEST((empty_like(x).shape() == Shape{2, 2}));
}

// ==== table: Random numbers ====
BOOST_AUTO_TEST_CASE(random_spellings_run) {
  manual_seed(0);
  const Tensor first = randn({2, 3});
  manual_seed(0);
  BOOST_TEST(randn({2, 3}).equal(first));  // the same seed draws the same numbers
  BOOST_TEST(rand({2, 3}).max().item<double>() < 1.0);
  BOOST_TEST(randint(0, 10, {5}).max().item<int64_t>() < 10);
  BOOST_TEST(randperm(5).sum().item<int64_t>() == 10);
  Generator g(42);
  Generator same(42);
  BOOST_TEST(randn({2, 3}, g).equal(randn({2, 3}, same)));
  const nn::Linear from_g = nn::Linear(4, 8, true, g);
  nn::Dropout dropout_g = nn::Dropout(0.1, g);
  BOOST_TEST(from_g.weight.equal(nn::Linear(4, 8, true, same).weight));  // same stream, same weights
  BOOST_TEST(dropout_g(ones({1000})).equal(nn::Dropout(0.1, same)(ones({1000}))));
  Tensor x = zeros({100});
  x.uniform_(-1, 1), x.normal_(0, 0.02);
  BOOST_TEST(x.abs().max().item<double>() < 0.2);

  x.exponential_(), x.exponential_(2.5);
  BOOST_TEST(x.min().item<double>() >= 0.0);
  const Tensor probs = tensor({0.0, 0.0, 1.0});  // all the mass on class 2
  BOOST_TEST(multinomial(probs, 1).equal(tensor(std::vector<int64_t>{2}, {1})));
  BOOST_TEST(probs.multinomial(1).equal(tensor(std::vector<int64_t>{2}, {1})));
  BOOST_TEST(multinomial(probs, 5, true).equal(full({5}, 2, {.dtype = kInt64})));
  Tensor state = get_rng_state();
  const Tensor next = rand({4});
  set_rng_state(state);
  BOOST_TEST(rand({4}).equal(next));  // the restored state draws the same numbers again
  BOOST_TEST((state.dtype() == kInt64 && state.numel() == 5056));
  state = g.get_state();
  const Tensor drawn = randn({3}, g);
  g.set_state(state);
  BOOST_TEST(randn({3}, g).equal(drawn));
}

// ==== table: Ops ====
BOOST_AUTO_TEST_CASE(op_spellings_run) {
  const Tensor a = tensor({{1, -2}, {3, 4}}), b = tensor({{2, 2}, {2, 2}});
  BOOST_TEST((a + b).equal(tensor({{3, 0}, {5, 6}})));
  BOOST_TEST((a - b).equal(tensor({{-1, -4}, {1, 2}})));
  BOOST_TEST((a * b).equal(a / b * 4));
  BOOST_TEST((-a).equal(a * -1));
  BOOST_TEST((a * 2 + (1 - a) + a / 2).equal(a * 1.5 + 1));
  BOOST_TEST(matmul(a, b).equal(a.matmul(b)));
  BOOST_TEST(a.pow(2).equal(pow(a, 2)));
  BOOST_TEST(exp(a).log().allclose(a));
  BOOST_TEST(std::isnan(a.log()[0][1].item<double>()));  // log(-2)
  BOOST_TEST(a.abs().sqrt().pow(2).allclose(a.abs()));
  BOOST_TEST(a.sqrt()[1][1].item<double>() == 2.0);
  BOOST_TEST(a.relu().equal(tensor({{1, 0}, {3, 4}})));
  BOOST_TEST((a.tanh().abs() < 1).equal(a.sigmoid() > 0));
  BOOST_TEST((sin(a) * sin(a) + a.cos() * a.cos()).allclose(ones({2, 2})));  // sin^2 + cos^2 = 1
  BOOST_TEST(a.clamp(0.0).equal(a.relu()));
  BOOST_TEST(a.clamp(-1.0, 1.0).equal(tensor({{1, -1}, {1, 1}})));
  BOOST_TEST(where(a > 0, a, b).equal(tensor({{1, 2}, {3, 4}})));
  BOOST_TEST(a.masked_fill(a < 0, 0.0).equal(a.relu()));
  BOOST_TEST((a < b).equal(lt(a, b)));
  BOOST_TEST((a == 0).sum().item<int64_t>() == 0);
  BOOST_TEST(a.sum().item<double>() == 6.0);
  BOOST_TEST(a.sum(1, true).equal(tensor(std::vector<double>{-1, 7}, {2, 1})));
  BOOST_TEST(a.mean().item<double>() == 1.5);
  BOOST_TEST(a.mean(0).equal(tensor({2, 1})));
  BOOST_TEST(a.max().item<double>() == 4.0);
  auto [values, indices] = a.max(1);
  BOOST_TEST(values.equal(tensor({1, 4})));
  BOOST_TEST(indices.equal(a.argmax(1)));
  auto [top, top_indices] = topk(a, 2);  // each row sorted from its largest down
  BOOST_TEST(top.equal(tensor({{1, -2}, {4, 3}})));
  BOOST_TEST(top_indices.select(1, 0).equal(indices));
  BOOST_TEST(std::get<0>(a.topk(1, 0, false)).equal(tensor({{1, -2}})));
  BOOST_TEST(a.cumsum(0).equal(tensor({{1, -2}, {4, 2}})));
  BOOST_TEST(cumsum(a, 1).equal(tensor({{1, -1}, {3, 7}})));
  // Deviations from the mean 1.5: -0.5, -3.5, 1.5, 2.5, squares summing to 21.
  BOOST_TEST(a.var().item<double>() == 7.0, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(a.var(1, false).allclose(tensor({2.25, 0.25})));
  BOOST_TEST(var(a, {0, 1}, 0, true).item<double>() == 5.25, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(a.std().item<double>() == std::sqrt(7.0), boost::test_tools::tolerance(1e-6));
  BOOST_TEST(minigrad::std(a, 0).allclose(tensor({std::sqrt(2.0), std::sqrt(18.0)})));
  BOOST_TEST(a.softmax(-1).sum(-1).allclose(ones({2})));
  BOOST_TEST(a.log_softmax(-1).exp().allclose(a.softmax(-1)));
  BOOST_TEST(a.reshape({4, 1}).equal(a.view({-1}).unsqueeze(1)));
  BOOST_TEST(a.flatten().equal(a.view({-1})));
  BOOST_TEST(a.t().equal(a.transpose(0, 1)));
  BOOST_TEST(a.permute({1, 0}).equal(a.t()));
  BOOST_TEST(a.unsqueeze(0).dim() == 3);
  BOOST_TEST(a.squeeze().equal(a));
  BOOST_TEST((cat({a, b}, 0).shape() == Shape{4, 2}));
  BOOST_TEST((stack({a, b}).shape() == Shape{2, 2, 2}));

  const int threads = get_num_threads();
  set_num_threads(2);
  BOOST_TEST(get_num_threads() == 2);
  set_num_threads(threads);

  [[maybe_unused]] const bool flushes =
      set_flush_denormal(true);  // the CPU's flush modes: every x86-64 has them
#if defined(__x86_64__)
  BOOST_TEST(flushes);
#endif
  set_flush_denormal(false);
}

// ==== table: Indexing, slicing and embeddings ====
BOOST_AUTO_TEST_CASE(indexing_spellings_run) {
  using namespace minigrad::indexing;
  const int64_t block_size = 2, T = 2;
  {
    const Tensor idx = arange(6).reshape({2, 3});  // [[0, 1, 2], [3, 4, 5]]
    BOOST_TEST(
        idx.index({Slice(), Slice(-block_size, None)}).equal(tensor({{1, 2}, {4, 5}}, {.dtype = kInt64})));
    const Tensor logits = arange(12.0).reshape({2, 2, 3});
    BOOST_TEST(logits.index({Slice(), -1, Slice()}).equal(tensor({{3, 4, 5}, {9, 10, 11}})));
    BOOST_TEST(tril(ones({T, T})).equal(tensor({{1, 0}, {1, 1}})));
    const Tensor tril = minigrad::tril(ones({3, 3}));  // the course's buffer, named as there
    BOOST_TEST(tril.index({Slice(None, T), Slice(None, T)}).equal(tensor({{1, 0}, {1, 1}})));
    const Tensor wei = zeros({2, T, T});  // [B, T, T]
    const Tensor masked = wei.masked_fill(tril.index({Slice(None, T), Slice(None, T)}) == 0, -INFINITY);
    BOOST_TEST(std::isinf(masked.at({1, 0, 1})));
    BOOST_TEST(masked.at({1, 1, 0}) == 0.0);
  }
  {
    const Tensor x = arange(4.0);
    BOOST_TEST(x.index({Ellipsis, Slice(None, None, 2)}).equal(tensor({0, 2})));
    BOOST_TEST((x.index({None}).shape() == Shape{1, 4}));
    BOOST_TEST(x.slice(0, 1, 3).equal(tensor({1, 2})));
    BOOST_TEST(x.slice(0, -2).equal(tensor({2, 3})));
    BOOST_TEST(x.split(2).size() == 2u);
    BOOST_TEST(split(x, {1, 3})[1].equal(tensor({1, 2, 3})));
  }
  {
    Tensor xbow = zeros({2, 2, 2}), x = ones({2, 3});
    const int64_t b = 1, t = 0;
    const Tensor v = tensor({5.0, 6.0});
    xbow.index_put_({b, t}, v);
    BOOST_TEST(xbow[1][0].equal(tensor({5, 6})));
    x.index_put_({Slice(), -1}, 0);
    BOOST_TEST(x.equal(tensor({{1, 1, 0}, {1, 1, 0}})));
  }
  {
    const Tensor x = arange(4.0).view({2, 2});
    BOOST_TEST(x.chunk(2, 1)[1].equal(tensor({{1}, {3}})));
    BOOST_TEST(x.triu(1).equal(tensor({{0, 1}, {0, 0}})));
  }
  {
    const Tensor table = arange(6.0).reshape({3, 2});
    const Tensor idx = tensor({{2, 0}}, {.dtype = kInt64});
    BOOST_TEST(table[idx].equal(tensor({{{4, 5}, {0, 1}}})));
  }
  {
    const Tensor x = arange(6.0).reshape({3, 2});
    const Tensor idx = tensor({{1}, {0}, {1}}, {.dtype = kInt64});
    BOOST_TEST(gather(x, 1, idx).equal(tensor({{1}, {2}, {5}})));
    BOOST_TEST(x.gather(1, idx).equal(gather(x, 1, idx)));
  }
  {
    const Tensor x = arange(6.0).reshape({3, 2}), idx = tensor({1}, {.dtype = kInt64});
    BOOST_TEST(index_select(x, 1, idx).equal(tensor({{1}, {3}, {5}})));
    BOOST_TEST(x.index_select(1, idx).equal(index_select(x, 1, idx)));
  }
  {
    Tensor x = zeros({2, 2});
    const Tensor idx = tensor({1, 1, 0}, {.dtype = kInt64}), src = ones({3, 2});
    BOOST_TEST(index_add(x, 0, idx, src).equal(tensor({{1, 1}, {2, 2}})));
    x.index_add_(0, idx, src);
    BOOST_TEST(x.equal(tensor({{1, 1}, {2, 2}})));
  }
  {
    const Tensor x = zeros({1, 2}), idx = tensor({{0, 0}}, {.dtype = kInt64}), src = ones({1, 2});
    BOOST_TEST(x.scatter_add(1, idx, src).equal(tensor({{2, 0}})));
    BOOST_TEST(scatter_add(x, 1, idx, src).equal(x.scatter_add(1, idx, src)));
  }
  {
    const std::vector<Tensor> heads = {ones({2, 1}), zeros({2, 1})};
    BOOST_TEST(cat(heads, -1).equal(tensor({{1, 0}, {1, 0}})));
    const Tensor a = ones({2}), b = zeros({2});
    BOOST_TEST(stack({a, b}, -1).equal(tensor({{1, 0}, {1, 0}})));
    const Tensor y = tensor({3, 0}, {.dtype = kInt64});
    BOOST_TEST(F::one_hot(y, 4).equal(one_hot(y, 4)));
    BOOST_TEST(one_hot(y, 4).equal(tensor({{0, 0, 0, 1}, {1, 0, 0, 0}}, {.dtype = kInt64})));
    BOOST_TEST((tensor({{0}, {1}, {1}, {0}}).shape() == Shape{4, 1}));
  }
  manual_seed(0);
  BOOST_TEST(to_string(nn::Embedding(65, 128)) == "Embedding(65, 128)");
  BOOST_TEST(to_string(nn::Embedding(65, 128, 0)) == "Embedding(65, 128, padding_idx=0)");
  const Tensor weight = randn({65, 128}), idx = arange(6).reshape({2, 3});
  BOOST_TEST(F::embedding(idx, weight).equal(embedding(weight, idx)));
  BOOST_TEST((F::embedding(idx, weight).shape() == Shape{2, 3, 128}));
}

// ==== table: Autograd ====
BOOST_AUTO_TEST_CASE(autograd_spellings_run) {
  manual_seed(0);
  Tensor w = randn({3}, {.requires_grad = true});
  w.requires_grad_();  // already on: nothing changes
  BOOST_TEST(w.requires_grad());
  Tensor y = w * 3;
  y.retain_grad();
  y.backward(ones_like(y));  // dy/dw = 3 for each element
  BOOST_TEST(w.grad().equal(full({3}, 3.0)));
  BOOST_TEST(y.grad().equal(ones({3})));
  BOOST_TEST((w.is_leaf() && !y.is_leaf()));
  BOOST_TEST(y.grad_fn()->name() == "MulBackward0");

  w.set_grad(Tensor());
  Tensor loss = (w * w).sum();  // d loss / dw = 2 w
  loss.backward(Tensor(), true);
  loss.backward();  // gradients add up: 4 w
  BOOST_TEST(w.grad().allclose(w.detach() * 4));
  {
    NoGradGuard no_grad;
    BOOST_TEST(!is_grad_enabled());
    BOOST_TEST(!(w * 2).requires_grad());
  }
  BOOST_TEST(is_grad_enabled());

  auto f = [](const std::vector<Tensor>& in) { return (in[0] * in[0]).sum(); };
  const std::vector<Tensor> inputs = {randn({3}, {.dtype = kFloat64, .requires_grad = true})};
  BOOST_TEST(gradcheck(f, inputs));

  std::vector<float> seen;  // what the hook finds in w.grad(): d(sum(2w))/dw = 2 per element
  auto hook = [&](Tensor& leaf) { seen.push_back(leaf.grad()[0].item<float>()); };
  w.set_grad(Tensor());
  RemovableHandle h = w.register_post_accumulate_grad_hook(hook);
  (w * 2).sum().backward();
  h.remove();
  (w * 2).sum().backward();  // removed: not called again
  BOOST_TEST(seen == std::vector<float>({2.0f}), boost::test_tools::per_element());
}

// ==== table: Modules ====
namespace {
struct Net : nn::Module {
  nn::Linear& fc;
  Tensor w;

  Net() : fc(register_module("fc", nn::Linear(2, 2))) {
    w = register_parameter("w", zeros({2}));
    register_buffer("running", zeros({2}));
  }
  Tensor forward(const Tensor& x) override { return fc(x) + w; }
};

// The course's weight init: Linear weights from N(0, 0.02), biases zero.
void init_weights(nn::Module& m) {
  if (nn::Linear* linear = m.as<nn::Linear>()) {
    NoGradGuard no_grad;
    linear->weight.normal_(0, 0.02);
    if (linear->bias.defined()) linear->bias.zero_();
  }
}

struct WithScratch : nn::Module {
  WithScratch() { register_buffer("scratch", zeros({2}), false); }
};
}  // namespace

BOOST_AUTO_TEST_CASE(module_spellings_run) {
  manual_seed(0);
  nn::Sequential layers{nn::Linear(4, 8), nn::Linear(4, 8, false), nn::ReLU(),
                        nn::Tanh(),       nn::Sigmoid(),           nn::GELU("tanh"),
                        nn::Dropout(0.1), nn::Identity(),          nn::Flatten()};
  BOOST_TEST(layers.size() == 9);
  BOOST_TEST(to_string(nn::LayerNorm(128)) == "LayerNorm((128,), eps=1e-05, elementwise_affine=True)");
  BOOST_TEST(nn::LayerNorm({4, 5}, 1e-6, false).parameters().empty());
  BOOST_TEST(!layers.at<nn::Linear>(1).bias.defined());
  BOOST_TEST(to_string(layers[5]) == "GELU(approximate='tanh')");

  nn::Sequential net{nn::Linear(2, 16), nn::ReLU(), nn::Linear(16, 1)};
  BOOST_TEST(net.size() == 3);
  BOOST_TEST((net.at<nn::Linear>(0).weight.shape() == Shape{16, 2}));
  BOOST_TEST(&net[0] == &net.at<nn::Linear>(0));

  Net model;
  Tensor x = ones({3, 2});
  BOOST_TEST((model(x).shape() == Shape{3, 2}));
  BOOST_TEST(model.parameters().size() == 3u);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  BOOST_TEST(names == (std::vector<std::string>{"w", "fc.weight", "fc.bias"}),
             boost::test_tools::per_element());
  BOOST_TEST((model.children().size() == 1u && model.modules().size() == 2u));
  model.eval();
  BOOST_TEST(!model.is_training());
  model.train();
  BOOST_TEST(model.is_training());

  model(x).sum().backward();
  model.zero_grad();
  BOOST_TEST(model.w.grad().equal(zeros({2})));

  nn::StateDict sd = model.state_dict();
  BOOST_TEST(sd.size() == 4u);               // w, running, fc.weight, fc.bias
  for (auto& [name, t] : sd) t = t.clone();  // handles to the model's data, as in PyTorch: keep a copy
  {
    NoGradGuard no_grad;
    model.w.fill_(5);
  }
  model.load_state_dict(sd);
  BOOST_TEST(model.w.equal(zeros({2})));

  std::ostringstream printed;
  std::streambuf* terminal = std::cout.rdbuf(printed.rdbuf());
  std::cout << model << "\n";
  std::cout.rdbuf(terminal);
  BOOST_TEST(printed.str() == "Net(\n  (fc): Linear(in_features=2, out_features=2, bias=True)\n)\n");

  nn::FeedForward ff(128);
  int64_t count = 0;
  for (const Tensor& p : ff.parameters()) count += p.numel();
  BOOST_TEST(count == 131712);  // 128*512 + 512 + 512*128 + 128

  BOOST_TEST((model.buffers().size() == 1u && model.named_buffers()[0].first == "running"));
  WithScratch scratch;
  BOOST_TEST((scratch.named_buffers().size() == 1u && scratch.state_dict().empty()));
  nn::ModuleList heads{nn::Linear(2, 2), nn::Linear(2, 2)};
  heads.append(nn::ReLU());
  BOOST_TEST((&heads[-1] == &heads[2] && heads.size() == 3));
  int64_t linears = 0;
  for (nn::Module& head : heads) linears += head.as<nn::Linear>() != nullptr;
  BOOST_TEST(linears == 2);
  BOOST_TEST(heads.named_parameters()[2].first == "1.weight");
  model.apply(init_weights);
  BOOST_TEST(model.fc.bias.equal(zeros({2})));
  BOOST_TEST(model.fc.as<nn::Linear>() == &model.fc);
  model.double_();
  BOOST_TEST((model.fc.weight.dtype() == kFloat64 && model.w.dtype() == kFloat64));
  model.float_(), model.to(kFloat64), model.to(kFloat32);
  BOOST_TEST((model.fc.weight.dtype() == kFloat32));
}

// ==== table: Initialisation ====
BOOST_AUTO_TEST_CASE(init_spellings_run) {
  manual_seed(0);
  Tensor w = empty({4, 3}), b = empty({4});
  nn::init::xavier_uniform_(w);
  BOOST_TEST(w.abs().max().item<double>() <= std::sqrt(6.0 / 7.0));  // gain * sqrt(6 / (fan_in + fan_out))
  nn::init::kaiming_uniform_(w, std::sqrt(5.0));
  BOOST_TEST(w.abs().max().item<double>() <= 1 / std::sqrt(3.0));  // 1 / sqrt(fan_in)
  nn::init::normal_(w, 0, 0.02);
  BOOST_TEST(w.abs().max().item<double>() < 0.2);
  nn::init::zeros_(b), nn::init::constant_(b, 0.1);
  BOOST_TEST(b.equal(full({4}, 0.1)));
  BOOST_TEST(nn::init::calculate_gain("relu") == std::sqrt(2.0));
}

// ==== table: Functional ====
BOOST_AUTO_TEST_CASE(functional_spellings_run) {
  namespace F = minigrad::nn::functional;
  manual_seed(0);
  const Tensor x = randn({3, 4}), w = randn({2, 4}), b = randn({2});
  BOOST_TEST(F::linear(x, w, b).allclose(matmul(x, w.t()) + b, 1e-5, 1e-6));
  BOOST_TEST(relu(x).equal(x.clamp(0.0)));
  BOOST_TEST(softmax(x, -1).log().allclose(log_softmax(x, 1), 1e-5, 1e-6));
  BOOST_TEST(F::relu(x).equal(relu(x)));
  BOOST_TEST(F::softmax(x, -1).equal(softmax(x, -1)));
  BOOST_TEST(F::log_softmax(x, 1).equal(log_softmax(x, 1)));
  const Tensor weight = full({4}, 2.0), bias = full({4}, 0.5);
  const Tensor normed = F::layer_norm(x, {4}, weight, bias, 1e-5);  // each row: mean 0.5, variance 4 (biased)
  BOOST_TEST(normed.mean(1).allclose(full({3}, 0.5), 1e-5, 1e-5));
  BOOST_TEST(((normed - 0.5) / 2).var(1, false).allclose(ones({3}), 1e-3, 1e-3));
  BOOST_TEST(F::gelu(zeros({2})).equal(zeros({2})));
  BOOST_TEST(F::gelu(x, "tanh").allclose(F::gelu(x), 1e-2, 1e-3));
  const Tensor dropped = F::dropout(x, 0.1, true);
  BOOST_TEST(where(dropped == 0, x / 0.9, dropped).allclose(x / 0.9));  // kept values scaled by 1 / (1 - p)
}

// ==== table: Losses ====
BOOST_AUTO_TEST_CASE(loss_spellings_run) {
  const Tensor pred = tensor({1, 2}), target = zeros({2});
  BOOST_TEST(F::mse_loss(pred, target).item<double>() == 2.5);  // (1 + 4) / 2
  BOOST_TEST(F::mse_loss(pred, target, {.reduction = nn::Reduction::Sum}).item<double>() == 5.0);
  BOOST_TEST(F::l1_loss(pred, target).item<double>() == 1.5);

  // Equal scores for 4 classes: every class has probability 1/4, every loss is log 4.
  const Tensor logits = zeros({2, 4});
  const Tensor labels = tensor(std::vector<int64_t>{0, 3}, {2});
  const double log4 = std::log(4.0);
  BOOST_TEST(F::cross_entropy(logits, labels).item<double>() == log4, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(F::cross_entropy(logits, labels, {.label_smoothing = 0.1}).item<double>() == log4,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(F::nll_loss(log_softmax(logits, 1), labels).item<double>() == log4,
             boost::test_tools::tolerance(1e-6));
  const Tensor w = tensor({1, 1, 1, 2});
  const Tensor per_row =
      F::cross_entropy(logits, labels, {.weight = w, .reduction = nn::Reduction::None, .ignore_index = 0});
  BOOST_TEST(per_row.allclose(tensor({0, 2 * log4}), 1e-6, 1e-6));  // label 0 ignored, label 3 weighted 2
  {
    const int64_t B = 1, T = 2, C = 4;
    const Tensor logits = zeros({B, T, C}), targets = labels.view({B, T});  // the course's shapes
    BOOST_TEST(F::cross_entropy(logits.view({B * T, C}), targets.view({B * T})).item<double>() == log4,
               boost::test_tools::tolerance(1e-6));
  }
  nn::CrossEntropyLoss criterion;
  BOOST_TEST(criterion(logits, labels).item<double>() == log4, boost::test_tools::tolerance(1e-6));

  const Tensor z = zeros({3}), t = ones({3}), pw = full({3}, 3.0);
  BOOST_TEST(F::binary_cross_entropy_with_logits(z, t).item<double>() == std::log(2.0),
             boost::test_tools::tolerance(1e-6));  // -log sigmoid(0)
  BOOST_TEST(nn::BCEWithLogitsLoss({.pos_weight = pw})(z, t).item<double>() == 3 * std::log(2.0),
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(nn::MSELoss()(pred, target).item<double>() == 2.5);
  BOOST_TEST(nn::L1Loss()(pred, target).item<double>() == 1.5);
  BOOST_TEST(nn::NLLLoss()(log_softmax(logits, 1), labels).item<double>() == log4,
             boost::test_tools::tolerance(1e-6));
}

// ==== table: Optimizers ====
BOOST_AUTO_TEST_CASE(optimizer_spellings_run) {
  manual_seed(0);
  Net model;
  {
    optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
    model(ones({1, 2})).sum().backward();  // d/dw = 1 for both elements of w
    opt.step();                            // first step: w = 0 - 0.1 * 1
    BOOST_TEST(model.w.allclose(full({2}, -0.1)));
    opt.zero_grad();  // zeros in place, PyTorch 1.13's default
    BOOST_TEST(model.w.grad().to_vector<float>() == std::vector<float>({0.0f, 0.0f}),
               boost::test_tools::per_element());
  }
  {
    optim::Adam opt(model.parameters(), {.lr = 1e-3});
    opt.set_lr(0.01);
    BOOST_TEST(opt.lr() == 0.01);
    model(ones({1, 2})).sum().backward();
    opt.step();
    auto sd = opt.state_dict();
    BOOST_TEST(sd.contains("state.0.exp_avg"));
    opt.load_state_dict(sd);
  }
  {
    optim::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 0.1});
    opt.zero_grad();
    model(ones({1, 2})).sum().backward();
    const double norm = nn::utils::clip_grad_norm_(model.parameters(), 1.0);
    double squares = 0;  // the gradients' norm after clipping, computed here
    for (const Tensor& p : model.parameters()) squares += (p.grad() * p.grad()).sum().item<double>();
    BOOST_TEST(norm > 1.0);
    BOOST_TEST(std::sqrt(squares) == 1.0, boost::test_tools::tolerance(1e-5));
    // the eight gradients were all 1, so 1 / sqrt(8) = 0.354 each after the norm's clipping
    nn::utils::clip_grad_value_(model.parameters(), 0.25);
    BOOST_TEST(model.w.grad().to_vector<float>() == std::vector<float>({0.25f, 0.25f}),
               boost::test_tools::per_element());
    opt.step();
  }
}

// ==== table: Schedulers ====
BOOST_AUTO_TEST_CASE(scheduler_spellings_run) {
  Net model;
  {
    optim::SGD opt(model.parameters(), {.lr = 1.0});
    optim::StepLR scheduler(opt, 10, 0.5);
    for (int epoch = 0; epoch < 10; ++epoch) opt.step(), scheduler.step();
    BOOST_TEST(scheduler.get_last_lr()[0] == 0.5);
  }
  {
    optim::SGD opt(model.parameters(), {.lr = 1.0});
    optim::CosineAnnealingLR scheduler(opt, 100);
    for (int epoch = 0; epoch < 50; ++epoch) opt.step(), scheduler.step();
    BOOST_TEST(opt.lr() == 0.5, boost::test_tools::tolerance(1e-12));  // (1 + cos(pi / 2)) / 2
  }
  {
    optim::SGD opt(model.parameters(), {.lr = 1.0});
    optim::LinearLR scheduler(opt, 0.1, 1.0, 5);
    BOOST_TEST(opt.lr() == 0.1, boost::test_tools::tolerance(1e-12));
    for (int epoch = 0; epoch < 5; ++epoch) opt.step(), scheduler.step();
    BOOST_TEST(opt.lr() == 1.0, boost::test_tools::tolerance(1e-12));
  }
}

// ==== table: Data ====
BOOST_AUTO_TEST_CASE(data_spellings_run) {
  const Tensor x = arange(0, 10, 1, {.dtype = kFloat32}).reshape({5, 2});
  const Tensor y = arange(5);
  data::TensorDataset dataset(x, y);
  BOOST_TEST(dataset.size() == 5);
  BOOST_TEST(dataset.get(3)[1].item<int64_t>() == 3);
  data::DataLoader loader(dataset, {.batch_size = 32, .shuffle = true});
  BOOST_TEST(loader.size() == 1);
  int64_t rows = 0;
  for (const auto& batch : loader) rows += batch[0].size(0) + 0 * batch[1].size(0);
  BOOST_TEST(rows == 5);
  auto parts = data::random_split(dataset, {0.8, 0.2});
  BOOST_TEST((parts.size() == 2 && parts[0].size() == 4 && parts[1].size() == 1));
  BOOST_TEST(data::random_split(dataset, {4, 1})[1].size() == 1);

  InDirectory repo(kSource);  // the data paths below are relative to the repository
  {
    auto [x, y] = data::load_iris("assets/iris.csv");
    BOOST_TEST((x.shape() == Shape{150, 4} && y.max().item<int64_t>() == 2));
  }
  {
    auto [x, y] = data::make_moons(200, 0.1);
    BOOST_TEST((x.shape() == Shape{200, 2} && y.sum().item<int64_t>() == 100));
  }
  BOOST_TEST((data::read_csv("assets/iris.csv", {.skip_header = true}).shape() == Shape{150, 5}));

  std::string text = data::read_text("assets/tinyshakespeare.txt");
  data::CharVocab vocab(text);
  BOOST_TEST(vocab.size() == 65);
  BOOST_TEST(vocab.chars().substr(0, 3) == "\n !");  // newline, space, '!': the smallest bytes
  BOOST_TEST(vocab.encode("hii") == (std::vector<int64_t>{46, 47, 47}), boost::test_tools::per_element());
  BOOST_TEST(vocab.decode(std::vector<int64_t>{46, 47}) == "hi");
  Tensor train_data = vocab.encode_tensor(text);
  BOOST_TEST(train_data.size(0) == 1115394);
  {
    auto [x, y] = data::get_batch(train_data, 32, 8);
    BOOST_TEST((x.shape() == Shape{32, 8}));
    BOOST_TEST(equal(x.slice(1, 1, 8), y.slice(1, 0, 7)));  // y is x one token later
  }
}

// ==== table: Checkpoints ====
BOOST_AUTO_TEST_CASE(checkpoint_spellings_run) {
  const fs::path dir = fresh_folder("docs_checkpoints");
  {
    InDirectory here(dir);
    Net model;
    {
      NoGradGuard no_grad;
      model.w.fill_(2);
    }
    save(model, "model.safetensors");
    Net other;
    load(other, "model.safetensors");
    BOOST_TEST(other.w.equal(full({2}, 2.0)));
    BOOST_TEST(other.fc.weight.equal(model.fc.weight));
    {
      NoGradGuard no_grad;
      model.w.zero_();
    }
    load(model, "model.safetensors");
    BOOST_TEST(model.w.equal(full({2}, 2.0)));

    {
      nn::NamedTensors tensors = {{"w", ones({2})}};
      save_file(tensors, "t.safetensors", {{"step", "100"}});
    }
    nn::NamedTensors tensors = load_file("t.safetensors");
    BOOST_TEST_REQUIRE(tensors.size() == 1u);
    BOOST_TEST((tensors[0].first == "w" && tensors[0].second.equal(ones({2}))));
    BOOST_TEST(load_metadata("t.safetensors").at("step") == "100");

    optim::Adam opt(model.parameters(), {.lr = 1e-3});
    save_file(opt.state_dict(), "opt.safetensors");
    BOOST_TEST(load_file("opt.safetensors").size() == opt.state_dict().size());

    nn::StateDict sd = model.state_dict();
    sd.emplace_back("rng_state", get_rng_state());
    save_file(sd, "run.safetensors");
    const Tensor next = randn({3});
    for (const auto& [name, t] : load_file("run.safetensors"))
      if (name == "rng_state") set_rng_state(t);
    BOOST_TEST(randn({3}).equal(next));  // the run resumes the same draws
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

// Indexing and shape ops of the GPT course (autograd/ops_index.hpp, Tensor::index with Slice,
// slice with open and negative bounds, masked_fill with a broadcast mask, cat/stack on dim -1,
// batched matmul): values and gradients against real PyTorch (tests/fixtures/indexing.json,
// written by tools/reference/indexing_reference.py), a gradcheck row for every differentiable
// op (repeated indices included) and values worked out by hand. Bad input: test_index_errors.cpp.
//
// m is the 2x3 matrix [[0, 1, 2], [3, 4, 5]] where a test needs values it can read off by hand.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/autograd.hpp"
#include "fixture.hpp"
#include "support.hpp"

using namespace minigrad;
using namespace minigrad::indexing;

namespace {

using Values = std::vector<double>;
using Inputs = std::map<std::string, Tensor>;
using nlohmann::json;

Tensor matrix(Dtype dtype = kFloat64) { return tensor(Values{0, 1, 2, 3, 4, 5}, {2, 3}, {.dtype = dtype}); }
Tensor longs(const std::vector<int64_t>& values, const Shape& shape) { return tensor(values, shape); }
Values values_of(const Tensor& t) { return t.to_vector<double>(); }

using minigrad_test::message_has;

// ---- the PyTorch fixture ----------------------------------------------------------------------

const json& fixture_cases() { return minigrad_test::read_fixture("indexing.json").at("cases"); }

Dtype dtype_of(const std::string& name) {
  if (name == "float64") return kFloat64;
  if (name == "int64") return kInt64;
  if (name == "bool") return kBool;
  return kFloat32;
}

Values numbers(const json& values) {
  Values out;
  for (const json& v : values) out.push_back(minigrad_test::fixture_number(v));
  return out;
}

Tensor from_record(const json& record) {
  return tensor(numbers(record.at("values")), record.at("shape").get<Shape>(),
                {.dtype = dtype_of(record.at("dtype"))});
}

/// Every element within atol + rtol * |expected|, infinities equal; one assertion naming the worst.
void check_close(const Values& got, const Values& expected, const std::string& what, double atol = 1e-6) {
  BOOST_TEST_REQUIRE(got.size() == expected.size(),
                     what << ": " << got.size() << " values, PyTorch has " << expected.size());
  size_t worst = 0;
  double excess = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same_inf = std::isinf(expected[i]) && got[i] == expected[i];
    const double e = same_inf ? 0 : std::abs(got[i] - expected[i]) - (atol + 1e-6 * std::abs(expected[i]));
    if (!(e <= excess)) {  // also catches nan
      excess = e;
      worst = i;
    }
  }
  BOOST_TEST(excess <= 0,
             what << ": element " << worst << " is " << got[worst] << ", PyTorch has " << expected[worst]);
}

using Outputs = std::vector<Tensor>;
/// The minigrad spelling of each fixture case (same name as in indexing_reference.py).
const std::map<std::string, std::function<Outputs(Inputs&)>>& fixture_ops() {
  static const std::map<std::string, std::function<Outputs(Inputs&)>> ops = {
      {"embedding_BT_repeated", [](Inputs& x) { return Outputs{embedding(x["weight"], x["indices"])}; }},
      {"embedding_padding_idx_1", [](Inputs& x) { return Outputs{embedding(x["weight"], x["indices"], 1)}; }},
      {"embedding_padding_idx_minus_1",
       [](Inputs& x) { return Outputs{embedding(x["weight"], x["indices"], -1)}; }},
      {"index_select_dim0_repeated", [](Inputs& x) { return Outputs{index_select(x["a"], 0, x["index"])}; }},
      {"index_select_dim1", [](Inputs& x) { return Outputs{index_select(x["a"], 1, x["index"])}; }},
      {"index_select_dim_minus_1", [](Inputs& x) { return Outputs{x["a"].index_select(-1, x["index"])}; }},
      {"index_tensor_2d_negative", [](Inputs& x) { return Outputs{x["a"][x["index"]]}; }},
      {"gather_dim1", [](Inputs& x) { return Outputs{gather(x["a"], 1, x["index"])}; }},
      {"gather_dim0_repeated", [](Inputs& x) { return Outputs{gather(x["a"], 0, x["index"])}; }},
      {"index_add_dim0_alpha_2",
       [](Inputs& x) { return Outputs{index_add(x["a"], 0, x["index"], x["source"], 2)}; }},
      {"index_add_dim1", [](Inputs& x) { return Outputs{index_add(x["a"], 1, x["index"], x["source"])}; }},
      {"scatter_add_dim1_smaller_index",
       [](Inputs& x) { return Outputs{scatter_add(x["a"], 1, x["index"], x["src"])}; }},
      {"scatter_add_dim0", [](Inputs& x) { return Outputs{scatter_add(x["a"], 0, x["index"], x["src"])}; }},
      {"tril", [](Inputs& x) { return Outputs{tril(x["a"])}; }},
      {"tril_diagonal_minus_1_batched", [](Inputs& x) { return Outputs{tril(x["a"], -1)}; }},
      {"tril_diagonal_2", [](Inputs& x) { return Outputs{x["a"].tril(2)}; }},
      {"triu_diagonal_1", [](Inputs& x) { return Outputs{triu(x["a"], 1)}; }},
      {"triu_batched", [](Inputs& x) { return Outputs{x["a"].triu()}; }},
      {"masked_fill_causal_softmax",
       [](Inputs& x) {
         const Tensor mask = x["tril"].index({Slice(None, 3), Slice(None, 3)}) == 0;
         return Outputs{softmax(x["wei"].masked_fill(mask, -INFINITY), -1)};
       }},
      {"masked_fill_causal",
       [](Inputs& x) { return Outputs{x["wei"].masked_fill(x["tril"] == 0, -INFINITY)}; }},
      {"slice_negative_start",
       [](Inputs& x) {
         return Outputs{x["idx"].index({Slice(), Slice(-3, None)})};
       }},
      {"slice_last_position",
       [](Inputs& x) {
         return Outputs{x["logits"].index({Slice(), -1, Slice()})};
       }},
      {"slice_both_dims",
       [](Inputs& x) {
         return Outputs{x["tril"].index({Slice(None, 3), Slice(None, 3)})};
       }},
      {"slice_step_2_ellipsis",
       [](Inputs& x) {
         return Outputs{x["x"].index({Ellipsis, Slice(None, None, 2)})};
       }},
      {"slice_none_negative_stop",
       [](Inputs& x) {
         return Outputs{x["x"].index({None, Slice(1, None), Slice(None, -1)})};
       }},
      {"slice_clamped_bounds",
       [](Inputs& x) {
         return Outputs{x["x"].index({Slice(-10, 2), Slice(3, 100)})};
       }},
      {"index_tensor_middle_dim",
       [](Inputs& x) {
         return Outputs{x["x"].index({Slice(), x["idx"]})};
       }},
      {"index_integer_then_tensor",
       [](Inputs& x) {
         return Outputs{x["x"].index({1, Slice(), x["idx"]})};
       }},
      {"cat_dim_minus_1",
       [](Inputs& x) {
         return Outputs{cat({x["a"], x["b"], x["c"]}, -1)};
       }},
      {"stack_dim_minus_1",
       [](Inputs& x) {
         return Outputs{stack({x["a"], x["b"]}, -1)};
       }},
      {"stack_dim_1",
       [](Inputs& x) {
         return Outputs{stack({x["a"], x["b"], x["c"]}, 1)};
       }},
      {"split_2_dim_0", [](Inputs& x) { return split(x["x"], 2); }},
      {"split_sizes_dim_minus_1",
       [](Inputs& x) {
         return split(x["x"], {1, 3, 2}, -1);
       }},
      {"chunk_4_of_5", [](Inputs& x) { return chunk(x["x"], 4); }},
      {"chunk_3_dim_1", [](Inputs& x) { return x["x"].chunk(3, 1); }},
      {"matmul_BThs_at_BhsT", [](Inputs& x) { return Outputs{matmul(x["q"], x["kT"])}; }},
      {"matmul_BTT_at_BThs", [](Inputs& x) { return Outputs{x["wei"].matmul(x["v"])}; }},
      {"one_hot_5", [](Inputs& x) { return Outputs{one_hot(x["indices"], 5)}; }},
      {"one_hot_inferred", [](Inputs& x) { return Outputs{one_hot(x["indices"])}; }},
  };
  return ops;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(index_ops)

// ---- against PyTorch ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_fixture_case_matches_pytorchs_values_and_gradients) {
  int checked = 0;
  for (const json& c : fixture_cases()) {
    if (c.at("kind") != "op") continue;
    const std::string name = c.at("name");
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST_REQUIRE(fixture_ops().contains(name), "no minigrad spelling for fixture case " << name);
      Inputs inputs;
      for (const auto& [key, record] : c.at("inputs").items()) {
        inputs[key] = from_record(record);
        if (inputs[key].is_floating_point()) inputs[key].requires_grad_();
      }
      Inputs leaves = inputs;  // the op may not change the map's handles, but keep the leaves apart
      const Outputs outs = fixture_ops().at(name)(inputs);
      BOOST_TEST_REQUIRE(outs.size() == c.at("outs").size());
      Tensor loss;
      for (size_t i = 0; i < outs.size(); ++i) {
        const json& expected = c.at("outs")[i];
        BOOST_TEST(outs[i].shape() == expected.at("shape").get<Shape>());
        BOOST_TEST(dtype_name(outs[i].dtype()) == expected.at("dtype").get<std::string>());
        check_close(values_of(outs[i]), numbers(expected.at("values")), name + " out " + std::to_string(i));
        if (!outs[i].requires_grad()) continue;
        const Tensor grad_out =
            tensor(numbers(c.at("grad_outs")[i]), outs[i].shape(), {.dtype = outs[i].dtype()});
        // masked entries are -inf with a zero gradient: where the cotangent meets them, leave them out
        const Tensor term = where(outs[i] == -INFINITY, zeros({}), outs[i] * grad_out).sum();
        loss = loss.defined() ? loss + term : term;
      }
      // the node PyTorch names, for split's pieces, stepped slices and later tensor entries too
      const std::string grad_fn = c.at("grad_fn").get<std::string>();
      if (!grad_fn.empty()) BOOST_TEST(outs[0].grad_fn()->name() == grad_fn);
      if (loss.defined()) loss.backward();
      for (const auto& [key, expected] : c.at("grads").items()) {
        const Tensor grad = leaves[key].grad().defined() ? leaves[key].grad() : zeros_like(leaves[key]);
        check_close(values_of(grad), numbers(expected), name + " grad of " + key);
      }
      ++checked;
    }
  }
  BOOST_TEST(checked == static_cast<int>(fixture_ops().size()));  // every spelling met its case
}

// ---- gradcheck ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_index_op_backward_matches_finite_differences) {
  using In = std::vector<Tensor>;
  struct Row {
    const char* name;
    std::vector<Shape> shapes;
    std::function<Tensor(const In&)> f;
  };
  const Tensor ids = longs({0, 2, 2, 4, 0, 2}, {2, 3});  // repeated ids, as a batch of sequences
  const Tensor rows = longs({3, 0, 3, 1}, {4});
  const Tensor positions = longs({2, 0, 2, 1, 2, 2, 0, 0}, {2, 4});
  const Tensor narrow_positions = longs({0, 0, 3, 1, 1, 1}, {2, 3});
  const Tensor signed_ids = longs({1, -1, 1, 0}, {2, 2});
  const Tensor causal = tril(ones({4, 4})) == 0;
  // clang-format off
  const std::vector<Row> table = {
      {"embedding repeated ids",       {{5, 3}},         [&](auto& x) { return embedding(x[0], ids); }},
      // The padding row's zero gradient is a rule, not a derivative: finite differences would see
      // it, so here the padding row is one the ids do not use (the fixture checks the rule itself).
      {"embedding with padding_idx",   {{5, 3}},         [&](auto& x) { return embedding(x[0], ids, 3); }},
      {"index_select repeated dim 0",  {{4, 3}},         [&](auto& x) { return index_select(x[0], 0, rows); }},
      {"index_select repeated dim -1", {{2, 4}},         [&](auto& x) { return index_select(x[0], -1, rows); }},
      {"index by a 2-d tensor",        {{5, 3}},         [&](auto& x) { return index(x[0], signed_ids); }},
      {"gather repeated dim 0",        {{3, 4}},         [&](auto& x) { return gather(x[0], 0, positions); }},
      {"gather dim 1",                 {{2, 5}},         [&](auto& x) { return gather(x[0], 1, narrow_positions); }},
      {"index_add repeated",           {{4, 3}, {4, 3}}, [&](auto& x) { return index_add(x[0], 0, rows, x[1], 2); }},
      {"index_add dim 1",              {{2, 4}, {2, 4}}, [&](auto& x) { return index_add(x[0], 1, rows, x[1]); }},
      {"scatter_add repeated",         {{3, 4}, {2, 4}}, [&](auto& x) { return scatter_add(x[0], 0, positions, x[1]); }},
      {"scatter_add smaller index",    {{2, 4}, {2, 3}}, [&](auto& x) { return scatter_add(x[0], 1, narrow_positions, x[1]); }},
      {"tril",                         {{4, 4}},         [](auto& x) { return tril(x[0]); }},
      {"tril batched diagonal -1",     {{2, 3, 4}},      [](auto& x) { return tril(x[0], -1); }},
      {"triu diagonal 1",              {{3, 5}},         [](auto& x) { return triu(x[0], 1); }},
      {"index with Slice",             {{2, 5, 3}},      [](auto& x) { return x[0].index({Slice(), Slice(-3, None)}); }},
      {"index with an integer",        {{2, 5, 3}},      [](auto& x) { return x[0].index({Slice(), -1, Slice()}); }},
      {"index with a step",            {{2, 3, 5}},      [](auto& x) { return x[0].index({Ellipsis, Slice(1, None, 2)}); }},
      {"index with a tensor entry",    {{2, 5, 3}},      [&](auto& x) { return x[0].index({Slice(), rows}); }},
      {"slice open end",               {{5, 3}},         [](auto& x) { return slice(x[0], 0, -2); }},
      {"masked_fill broadcast mask",   {{2, 4, 4}},      [&](auto& x) { return masked_fill(x[0], causal, 0.5); }},
      {"split",                        {{5, 3}},         [](auto& x) { return cat(split(x[0], 2), 0) * 2; }},
      {"chunk",                        {{2, 6}},         [](auto& x) { return stack(chunk(x[0], 3, -1), 0); }},
      {"matmul [B, T, hs] @ [B, hs, T]", {{2, 4, 3}, {2, 3, 4}}, [](auto& x) { return matmul(x[0], x[1]); }},
  };
  // clang-format on
  Generator generator(0);
  for (const Row& row : table) {
    BOOST_TEST_CONTEXT(row.name) {
      In inputs;
      for (const Shape& shape : row.shapes)
        inputs.push_back(randn(shape, generator, {.dtype = kFloat64, .requires_grad = true}));
      try {
        BOOST_TEST(gradcheck(row.f, inputs));
      } catch (const std::exception& e) {
        BOOST_ERROR(e.what());
      }
    }
  }
}

// ---- values by hand ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(embedding_picks_rows_for_indices_of_any_shape) {
  const Tensor table = matrix().t();  // [3, 2]: rows [0, 3], [1, 4], [2, 5]
  const Tensor out = embedding(table, longs({2, 0, 2, 1}, {2, 2}));
  BOOST_TEST(out.shape() == Shape({2, 2, 2}));
  BOOST_TEST(values_of(out) == Values({2, 5, 0, 3, 2, 5, 1, 4}), boost::test_tools::per_element());
  BOOST_TEST(embedding(table, scalar_tensor(1, {.dtype = kInt64})).shape() ==
             Shape({2}));  // 0-d ids: one row
  BOOST_TEST(embedding(table, zeros({0}, {.dtype = kInt64})).shape() == Shape({0, 2}));
}

BOOST_AUTO_TEST_CASE(embedding_backward_adds_repeated_ids_and_skips_the_padding_row) {
  // ids 1, 1, 1, 0, 2: row 1 collects three gradients of 1, row 0 one; padding row 2 gets none.
  Tensor table = zeros({3, 2}, {.dtype = kFloat64, .requires_grad = true});
  embedding(table, longs({1, 1, 1, 0, 2}, {5}), 2).sum().backward();
  BOOST_TEST(values_of(table.grad()) == Values({1, 1, 3, 3, 0, 0}), boost::test_tools::per_element());
  table.set_grad(Tensor());
  embedding(table, longs({2, 2}, {2}), -1).sum().backward();  // -1 is row 2 too
  BOOST_TEST(values_of(table.grad()) == Values({0, 0, 0, 0, 0, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(indexing_by_a_tensor_takes_negative_indices_and_keeps_the_index_shape) {
  const Tensor m = matrix();
  const Tensor out = m[longs({-1, 0, 1}, {3, 1})];
  BOOST_TEST(out.shape() == Shape({3, 1, 3}));
  BOOST_TEST(values_of(out) == Values({3, 4, 5, 0, 1, 2, 3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(values_of(index_select(m, 1, longs({2, 2}, {2}))) == Values({2, 2, 5, 5}),
             boost::test_tools::per_element());
  BOOST_TEST(index_select(m, 1, scalar_tensor(0, {.dtype = kInt64})).shape() == Shape({2, 1}));  // as PyTorch
}

BOOST_AUTO_TEST_CASE(gather_index_add_and_scatter_add_follow_their_formulas) {
  const Tensor m = matrix();
  // gather dim 1: out[i][j] = m[i][index[i][j]]
  BOOST_TEST(values_of(gather(m, 1, longs({2, 0, 1, 1}, {2, 2}))) == Values({2, 0, 4, 4}),
             boost::test_tools::per_element());
  // index_add dim 0: rows 0 and 0 of source (all ones) land on row 1, twice
  const Tensor added = index_add(m, 0, longs({1, 1}, {2}), ones({2, 3}, {.dtype = kFloat64}), 10);
  BOOST_TEST(values_of(added) == Values({0, 1, 2, 23, 24, 25}), boost::test_tools::per_element());
  // scatter_add dim 1: out[i][index[i][j]] += src[i][j]
  const Tensor scattered =
      scatter_add(m, 1, longs({0, 0, 2, 2}, {2, 2}), tensor(Values{1, 2, 3, 4}, {2, 2}, {.dtype = kFloat64}));
  BOOST_TEST(values_of(scattered) == Values({3, 1, 2, 3, 4, 12}), boost::test_tools::per_element());
  BOOST_TEST(values_of(m) == Values({0, 1, 2, 3, 4, 5}), boost::test_tools::per_element());  // a untouched
}

BOOST_AUTO_TEST_CASE(index_add_in_place_changes_the_tensor_and_its_version) {
  Tensor counts = zeros({3}, {.dtype = kInt64});
  counts.index_add_(0, longs({2, 0, 2, 2}, {4}), ones({4}, {.dtype = kInt64}));
  BOOST_TEST(values_of(counts) == Values({1, 0, 3}), boost::test_tools::per_element());
  BOOST_TEST(counts.version() == 1);
  Tensor leaf = zeros({3}, {.requires_grad = true});
  BOOST_CHECK_THROW(leaf.index_add_(0, longs({0}, {1}), ones({1})), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(tril_and_triu_keep_a_triangle_per_matrix_for_every_dtype) {
  for (const Dtype dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      const Tensor full = ones({2, 3, 3}, {.dtype = dtype});
      const Values lower{1, 0, 0, 1, 1, 0, 1, 1, 1};
      const Tensor low = tril(full);
      BOOST_TEST(dtype_name(low.dtype()) == dtype_name(dtype));
      BOOST_TEST(values_of(low[1]) == lower, boost::test_tools::per_element());
      BOOST_TEST(values_of(triu(full, 1)[0]) == Values({0, 1, 1, 0, 0, 1, 0, 0, 0}),
                 boost::test_tools::per_element());
    }
  }
  BOOST_TEST(values_of(tril(matrix(), -1)) == Values({0, 0, 0, 3, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(values_of(tril(matrix(), 5)) == values_of(matrix()), boost::test_tools::per_element());
  BOOST_TEST(values_of(triu(matrix(), -1)) == values_of(matrix()), boost::test_tools::per_element());
  BOOST_TEST(tril(zeros({0, 3})).shape() == Shape({0, 3}));
}

BOOST_AUTO_TEST_CASE(index_with_slices_follows_python_slicing) {
  const Tensor x = arange(24).reshape({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  BOOST_TEST(x.index({Slice(), Slice(-2, None)}).shape() == Shape({2, 2, 4}));
  BOOST_TEST(values_of(x.index({1, -1})) == Values({20, 21, 22, 23}), boost::test_tools::per_element());
  BOOST_TEST(values_of(x.index({Slice(), -1, Slice()})) == Values({8, 9, 10, 11, 20, 21, 22, 23}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of(x.index({0, Slice(None, None, 2), Slice(1, 3)})) == Values({1, 2, 9, 10}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of(x.index({Ellipsis, 0})) == Values({0, 4, 8, 12, 16, 20}),
             boost::test_tools::per_element());
  BOOST_TEST(x.index({None, Ellipsis, None}).shape() == Shape({1, 2, 3, 4, 1}));
  BOOST_TEST(x.index({Slice(5, None)}).shape() == Shape({0, 3, 4}));  // past the end: empty, as Python
  BOOST_TEST(x.index({}).shape() == x.shape());
  BOOST_TEST(values_of(x.index({Slice(), Slice(), longs({3, 0}, {2})})) ==
                 Values({3, 0, 7, 4, 11, 8, 15, 12, 19, 16, 23, 20}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slice_takes_open_negative_and_stepped_bounds) {
  const Tensor v = arange(10);
  BOOST_TEST(values_of(slice(v, 0, -3)) == Values({7, 8, 9}), boost::test_tools::per_element());
  BOOST_TEST(values_of(v.slice(0, std::nullopt, 2)) == Values({0, 1}), boost::test_tools::per_element());
  BOOST_TEST(values_of(v.slice(0, 1, std::nullopt, 3)) == Values({1, 4, 7}),
             boost::test_tools::per_element());
  BOOST_TEST(v.slice().shape() == Shape({10}));
  BOOST_TEST(values_of(v.slice(0, -100, 100, 4)) == Values({0, 4, 8}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_hot_puts_a_one_at_each_class) {
  const Tensor out = one_hot(longs({0, 2, 1}, {3}), 4);
  BOOST_TEST(dtype_name(out.dtype()) == "int64");
  BOOST_TEST(out.shape() == Shape({3, 4}));
  BOOST_TEST(values_of(out) == Values({1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(one_hot(longs({3}, {1})).shape() == Shape({1, 4}));  // classes inferred: max + 1
  BOOST_TEST(one_hot(zeros({0}, {.dtype = kInt64}), 3).shape() == Shape({0, 3}));
}

BOOST_AUTO_TEST_CASE(split_and_chunk_cut_into_the_sizes_pytorch_gives) {
  struct Row {
    int64_t size, arg;
    bool is_chunk;
    std::vector<int64_t> sizes;  // read off PyTorch 1.13's torch.split / torch.chunk
  };
  const std::vector<Row> rows = {
      {5, 2, false, {2, 2, 1}},    {5, 5, false, {5}},      {5, 9, false, {5}},
      {10, 4, true, {3, 3, 3, 1}}, {5, 4, true, {2, 2, 1}}, {6, 4, true, {2, 2, 2}},
      {0, 3, true, {0, 0, 0}},     {0, 0, false, {0}},      {3, 5, true, {1, 1, 1}}};
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT((row.is_chunk ? "chunk " : "split ") << row.size << " by " << row.arg) {
      const Tensor x = zeros({2, row.size});
      const std::vector<Tensor> pieces = row.is_chunk ? chunk(x, row.arg, 1) : split(x, row.arg, -1);
      std::vector<int64_t> sizes;
      for (const Tensor& p : pieces) sizes.push_back(p.size(1));
      BOOST_TEST(sizes == row.sizes, boost::test_tools::per_element());
    }
  }
  const std::vector<Tensor> pieces = split(arange(6), {1, 0, 5});
  BOOST_TEST(values_of(pieces[2]) == Values({1, 2, 3, 4, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_column_vector_literal_is_a_n_by_1_tensor) {
  const Tensor column = tensor({{0}, {1}, {1}, {0}});
  BOOST_TEST(column.shape() == Shape({4, 1}));
  BOOST_TEST(values_of(column) == Values({0, 1, 1, 0}), boost::test_tools::per_element());
  BOOST_TEST(tensor({{{1}}, {{2}}}).shape() == Shape({2, 1, 1}));
  BOOST_TEST(tensor({{1, 2}}).shape() == Shape({1, 2}));
  BOOST_TEST(tensor({1, 2, 3}).shape() == Shape({3}));
  BOOST_TEST(tensor({{0}, {1}}, {.dtype = kInt64}).dtype() == kInt64);
  BOOST_TEST(tensor(2.5).dim() == 0);
  BOOST_TEST(tensor({}).shape() == Shape({0}));
  // A braced 1-d list with options must bind to the nested-list overload alone, not also to the
  // std::vector ones (that was ambiguous with a single NestedList overload).
  BOOST_TEST(tensor({0.5, -1.0, 2.0}, {.requires_grad = true}).requires_grad());
  BOOST_TEST(tensor(List2{{1, 2}, {3, 4}}).shape() == Shape({2, 2}));
  BOOST_CHECK_EXCEPTION(tensor({{1, 2}, {3}}), std::invalid_argument, message_has({"tensor", "ragged"}));
  BOOST_CHECK_EXCEPTION(tensor({{1}, 2}), std::invalid_argument, message_has({"tensor", "ragged"}));
  BOOST_CHECK_EXCEPTION(tensor({1, {2}}), std::invalid_argument, message_has({"tensor", "ragged"}));
}

// Python's x[...] = v (Tensor::index_put_) against what PyTorch's setitem wrote, case by case.
BOOST_AUTO_TEST_CASE(index_put_writes_what_pytorchs_setitem_writes) {
  using Put = std::function<void(Tensor & y, Inputs & x)>;
  const std::map<std::string, Put> puts{
      {"put_integers_row",
       [](Tensor& y, Inputs& x) {
         y.index_put_({0, 1}, x["v"]);
       }},
      {"put_slice_scalar",
       [](Tensor& y, Inputs&) {
         y.index_put_({Slice(), -1}, 7.5);
       }},
      {"put_ellipsis_step_broadcast",
       [](Tensor& y, Inputs& x) {
         y.index_put_({Ellipsis, Slice(None, None, 2)}, x["v"]);
       }},
      {"put_none_negative_stop",
       [](Tensor& y, Inputs& x) {
         y.index_put_({None, Slice(1, None), Slice(None, -1)}, x["v"]);
       }},
      {"put_clamped_bounds_zero",
       [](Tensor& y, Inputs&) {
         y.index_put_({Slice(-10, 2), Slice(3, 100)}, 0.0);
       }},
      {"put_integer_then_tensor",
       [](Tensor& y, Inputs& x) {
         y.index_put_({1, Slice(), longs({2, -1, 0, 1}, {2, 2})}, x["v"]);
       }},
      {"put_leading_ones_dropped", [](Tensor& y, Inputs& x) { y.index_put_({0}, x["v"]); }},
      {"put_float_into_int64", [](Tensor& y, Inputs& x) { y.index_put_({1}, x["v"]); }},
      {"put_whole_tensor", [](Tensor& y, Inputs& x) { y.index_put_({Ellipsis}, x["v"]); }},
  };
  size_t checked = 0;
  for (const json& c : fixture_cases()) {
    if (c.at("kind") != "index_put") continue;
    const std::string name = c.at("name");
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST_REQUIRE(puts.contains(name), "no minigrad spelling for fixture case " << name);
      Inputs inputs;
      for (const auto& [key, record] : c.at("inputs").items()) inputs[key] = from_record(record);
      Tensor y = inputs["x"].clone();
      puts.at(name)(y, inputs);
      const json& expected = c.at("outs")[0];
      BOOST_TEST(y.shape() == expected.at("shape").get<Shape>());
      BOOST_TEST(dtype_name(y.dtype()) == expected.at("dtype").get<std::string>());
      BOOST_TEST(values_of(y) == numbers(expected.at("values")), boost::test_tools::per_element());
      BOOST_TEST(y.version() == 1);  // one in-place change, counted once
      ++checked;
    }
  }
  BOOST_TEST(checked == puts.size());  // every spelling met its case
}

// The lecture's first averaging loop, xbow[b, t] = mean(x[b, :t + 1], 0), against the matrix
// product it is later replaced by (which the course shows equal, as here to float rounding).
BOOST_AUTO_TEST_CASE(index_put_fills_the_lectures_averaging_loop) {
  manual_seed(1337);
  const Tensor x = randn({4, 8, 2});
  Tensor xbow = zeros({4, 8, 2});
  for (int64_t b = 0; b < 4; ++b) {
    for (int64_t t = 0; t < 8; ++t) xbow.index_put_({b, t}, x.index({b, Slice(None, t + 1)}).mean(0));
  }
  Tensor wei = tril(ones({8, 8}));
  wei = wei / wei.sum(1, true);
  BOOST_TEST(allclose(xbow, matmul(wei, x)));
  BOOST_TEST((xbow == 0).sum().item<int64_t>() == 0);  // every element written
}

// Hand-worked: a tensor index with negative entries writes its rows; the values are read as they
// were before the write even when they are the tensor itself.
BOOST_AUTO_TEST_CASE(index_put_writes_rows_picked_by_a_tensor_and_reads_values_before_writing) {
  Tensor m = matrix();
  m.index_put_({longs({-1}, {1})}, tensor(Values{7, 8, 9}, {3}, {.dtype = kFloat64}));
  BOOST_TEST(values_of(m) == Values({0, 1, 2, 7, 8, 9}), boost::test_tools::per_element());
  Tensor r = tensor(Values{0, 1, 2, 3}, {4}, {.dtype = kFloat64});
  r.index_put_({longs({3, 2, 1, 0}, {4})}, r);  // PyTorch refuses overlapping memory here
  BOOST_TEST(values_of(r) == Values({3, 2, 1, 0}), boost::test_tools::per_element());
  Tensor e = matrix();
  e.index_put_({Slice(2, None)}, 5.0);  // an empty selection writes nothing
  BOOST_TEST(values_of(e) == values_of(matrix()), boost::test_tools::per_element());
}

// `x[0] = v` would rebind a temporary copy of the row and leave x as it was, so it does not
// compile; an lvalue handle still takes a new tensor.
static_assert(!std::is_assignable_v<Tensor, const Tensor&>);
static_assert(!std::is_assignable_v<Tensor, Tensor>);
static_assert(std::is_assignable_v<Tensor&, const Tensor&>);
static_assert(std::is_assignable_v<Tensor&, Tensor>);

// Regression: the backward of gather and scatter_add keeps its own copy of the index, so changing
// the index tensor after the forward cannot change the gradient.
BOOST_AUTO_TEST_CASE(gather_backward_is_unchanged_by_a_later_change_to_the_index) {
  Tensor a = zeros({3}, {.dtype = kFloat64, .requires_grad = true});
  Tensor idx = longs({2, 2}, {2});
  const Tensor out = gather(a, 0, idx);
  idx.fill_(0);
  out.sum().backward();
  BOOST_TEST(values_of(a.grad()) == Values({0, 0, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

// Shape ops: forward values against hand-computed results, every dtype, gradcheck for every op,
// which results share storage with their input, and one test per kind of error.
//
// m is the 2x3 matrix [[0, 1, 2], [3, 4, 5]] throughout; its row-major values are 0..5, so the
// expected values of an op can be read off by hand (m^T is 0, 3, 1, 4, 2, 5).
#include <boost/test/unit_test.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "support.hpp"

using namespace minigrad;

namespace {

using Values = std::vector<double>;

Tensor matrix(Dtype dtype = kFloat64) { return tensor(Values{0, 1, 2, 3, 4, 5}, {2, 3}, {.dtype = dtype}); }

/// 0, 1, ..., n - 1 in the given shape, float64.
Tensor counting(const Shape& shape) {
  Values values(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return tensor(values, shape, {.dtype = kFloat64});
}

Values values_of(const Tensor& t) { return t.to_vector<double>(); }

using minigrad_test::message_has;

}  // namespace

BOOST_AUTO_TEST_SUITE(shape_ops)

// ---- forward values ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_keeps_row_major_order_and_infers_minus_one) {
  const Tensor x = counting({2, 3, 4});
  const Tensor y = reshape(x, {4, -1});
  BOOST_TEST(y.shape() == Shape({4, 6}));
  BOOST_TEST(values_of(y) == values_of(x), boost::test_tools::per_element());
  BOOST_TEST(reshape(x, {-1}).shape() == Shape({24}));
  BOOST_TEST(reshape(x, {2, -1, 3}).shape() == Shape({2, 4, 3}));
  BOOST_TEST(view(x, {6, 4}).shape() == Shape({6, 4}));
  BOOST_TEST(x.reshape({3, 8}).at({1, 2}) == 10.0);  // row 1 starts at element 8
}

BOOST_AUTO_TEST_CASE(reshape_handles_zero_elements_and_zero_dims) {
  BOOST_TEST(reshape(zeros({0, 3}), {3, -1}).shape() == Shape({3, 0}));
  BOOST_TEST(reshape(zeros({0, 3}), {-1, 2}).shape() == Shape({0, 2}));
  const Tensor one = tensor(Values{7}, {1, 1});
  BOOST_TEST(reshape(one, {}).shape() == Shape({}));
  BOOST_TEST(reshape(one, {}).item<double>() == 7.0);
  BOOST_TEST(reshape(scalar_tensor(3.0), {1, 1, 1}).shape() == Shape({1, 1, 1}));
}

BOOST_AUTO_TEST_CASE(flatten_merges_the_dims_from_start_to_end) {
  const Tensor x = counting({2, 3, 4, 5});
  BOOST_TEST(flatten(x).shape() == Shape({120}));
  BOOST_TEST(flatten(x, 1).shape() == Shape({2, 60}));
  BOOST_TEST(flatten(x, 1, 2).shape() == Shape({2, 12, 5}));
  BOOST_TEST(flatten(x, -3, -2).shape() == Shape({2, 12, 5}));
  BOOST_TEST(flatten(x, 2, 2).shape() == Shape({2, 3, 4, 5}));
  BOOST_TEST(values_of(flatten(x, 1, 2)) == values_of(x), boost::test_tools::per_element());
  BOOST_TEST(flatten(scalar_tensor(2.0)).shape() == Shape({1}));  // 0-d becomes [1], as torch.flatten
}

BOOST_AUTO_TEST_CASE(unsqueeze_inserts_a_size_one_dim) {
  const Tensor m = matrix();
  BOOST_TEST(unsqueeze(m, 0).shape() == Shape({1, 2, 3}));
  BOOST_TEST(unsqueeze(m, 1).shape() == Shape({2, 1, 3}));
  BOOST_TEST(unsqueeze(m, 2).shape() == Shape({2, 3, 1}));
  BOOST_TEST(unsqueeze(m, -1).shape() == Shape({2, 3, 1}));
  BOOST_TEST(unsqueeze(m, -3).shape() == Shape({1, 2, 3}));
  BOOST_TEST(unsqueeze(scalar_tensor(1.0), 0).shape() == Shape({1}));
  BOOST_TEST(values_of(unsqueeze(m, 1)) == values_of(m), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(squeeze_removes_size_one_dims_and_ignores_others) {
  const Tensor x = zeros({1, 2, 1, 3, 1});
  BOOST_TEST(squeeze(x).shape() == Shape({2, 3}));
  BOOST_TEST(squeeze(x, 0).shape() == Shape({2, 1, 3, 1}));
  BOOST_TEST(squeeze(x, 2).shape() == Shape({1, 2, 3, 1}));
  BOOST_TEST(squeeze(x, -1).shape() == Shape({1, 2, 1, 3}));
  BOOST_TEST(squeeze(x, 1).shape() == Shape({1, 2, 1, 3, 1}));  // size 2: a no-op, as PyTorch
  BOOST_TEST(squeeze(ones({1, 1})).shape() == Shape({}));
  BOOST_TEST(squeeze(scalar_tensor(4.0), 0).shape() == Shape({}));
  BOOST_TEST(squeeze(scalar_tensor(4.0)).item<double>() == 4.0);
}

BOOST_AUTO_TEST_CASE(permute_moves_each_element_to_its_permuted_index) {
  // x[i, j, k] = 12 i + 4 j + k; out[k, i, j] = x[i, j, k].
  const Tensor out = permute(counting({2, 3, 4}), {2, 0, 1});
  BOOST_TEST(out.shape() == Shape({4, 2, 3}));
  const Values expected{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
  BOOST_TEST(values_of(out) == expected, boost::test_tools::per_element());
  BOOST_TEST(values_of(permute(counting({2, 3, 4}), {-1, 0, -2})) == expected,
             boost::test_tools::per_element());
  BOOST_TEST(values_of(permute(matrix(), {1, 0})) == Values({0, 3, 1, 4, 2, 5}),
             boost::test_tools::per_element());
  BOOST_TEST(permute(scalar_tensor(5.0), {}).item<double>() == 5.0);
}

BOOST_AUTO_TEST_CASE(transpose_swaps_two_dims) {
  // x[i, j, k] = 4 i + 2 j + k; out[k, j, i] = x[i, j, k].
  const Tensor x = counting({2, 2, 2});
  const Values expected{0, 4, 2, 6, 1, 5, 3, 7};
  BOOST_TEST(values_of(transpose(x, 0, 2)) == expected, boost::test_tools::per_element());
  BOOST_TEST(values_of(transpose(x, -1, 0)) == expected, boost::test_tools::per_element());
  BOOST_TEST(transpose(counting({2, 3, 4}), 1, 2).shape() == Shape({2, 4, 3}));
  BOOST_TEST(values_of(transpose(x, 1, 1)) == values_of(x), boost::test_tools::per_element());
}

// Swapping the last two dims takes a tiled path (16 x 16 tiles); these shapes cut tiles at every
// edge. The expected element is read off the counting input: out[b, j, i] = b * R * C + i * C + j.
BOOST_AUTO_TEST_CASE(transposing_the_last_two_dims_moves_every_element_across_tile_edges) {
  for (const Shape& shape :
       std::vector<Shape>{{1, 1}, {3, 17}, {16, 16}, {33, 15}, {2, 64, 32}, {2, 3, 5, 31}}) {
    const Tensor out = transpose(counting(shape), -2, -1);
    const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
    const int64_t batch = shape_numel(shape) / (rows * cols);
    Values expected;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i)
          expected.push_back(static_cast<double>(b * rows * cols + i * cols + j));
    BOOST_TEST_CONTEXT("shape " << shape) {
      BOOST_TEST(values_of(out) == expected, boost::test_tools::per_element());
    }
  }
  const Tensor ints = transpose(counting({2, 3, 4}).to(kInt64), 1, 2),
               flags = transpose(ones({5, 0}) > 0, 0, 1);
  BOOST_TEST(ints.to_vector<int64_t>()[1] == 4);  // out[0, 0, 1] = x[0, 1, 0]
  BOOST_TEST(flags.shape() == Shape({0, 5}));
}

BOOST_AUTO_TEST_CASE(t_transposes_a_matrix_and_keeps_vectors_and_scalars) {
  const Tensor mt = t(matrix());
  BOOST_TEST(mt.shape() == Shape({3, 2}));
  BOOST_TEST(values_of(mt) == Values({0, 3, 1, 4, 2, 5}), boost::test_tools::per_element());
  const Tensor v = tensor(Values{1, 2, 3}, {3});
  BOOST_TEST(t(v).shape() == Shape({3}));
  BOOST_TEST(values_of(t(v)) == Values({1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(t(scalar_tensor(2.0)).item<double>() == 2.0);
}

BOOST_AUTO_TEST_CASE(cat_joins_along_an_existing_dim) {
  const Tensor a = tensor({{1, 2}, {3, 4}});
  const Tensor b = tensor(Values{5, 6}, {2, 1});
  const Tensor c = tensor(Values{7, 8}, {1, 2});
  const Tensor columns = cat({a, b}, 1);
  BOOST_TEST(columns.shape() == Shape({2, 3}));
  BOOST_TEST(values_of(columns) == Values({1, 2, 5, 3, 4, 6}), boost::test_tools::per_element());
  BOOST_TEST(values_of(cat({a, b}, -1)) == Values({1, 2, 5, 3, 4, 6}), boost::test_tools::per_element());
  const Tensor rows = cat({a, c, a});
  BOOST_TEST(rows.shape() == Shape({5, 2}));
  BOOST_TEST(values_of(rows) == Values({1, 2, 3, 4, 7, 8, 1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(values_of(cat({a})) == Values({1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(cat({zeros({2, 0}), b}, 1).shape() == Shape({2, 1}));
}

BOOST_AUTO_TEST_CASE(cat_promotes_mixed_dtypes_as_torch_cat) {
  const Tensor ints = tensor(std::vector<int64_t>{1, 2}, {2});
  const Tensor floats = tensor(Values{0.5}, {1});  // float32
  const Tensor bools = tensor(std::vector<bool>{true, false}, {2});
  const Tensor mixed = cat({ints, floats});
  BOOST_TEST(dtype_name(mixed.dtype()) == dtype_name(kFloat32));
  BOOST_TEST(values_of(mixed) == Values({1, 2, 0.5}), boost::test_tools::per_element());
  const Tensor counts = cat({bools, ints});
  BOOST_TEST(dtype_name(counts.dtype()) == dtype_name(kInt64));
  BOOST_TEST(values_of(counts) == Values({1, 0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(dtype_name(cat({floats, tensor(Values{1}, {1}, {.dtype = kFloat64})}).dtype()) == "float64");
}

BOOST_AUTO_TEST_CASE(stack_joins_along_a_new_dim) {
  const Tensor a = tensor(Values{1, 2}, {2});
  const Tensor b = tensor(Values{3, 4}, {2});
  BOOST_TEST(stack({a, b}).shape() == Shape({2, 2}));
  BOOST_TEST(values_of(stack({a, b})) == Values({1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(values_of(stack({a, b}, 1)) == Values({1, 3, 2, 4}), boost::test_tools::per_element());
  BOOST_TEST(values_of(stack({a, b}, -1)) == Values({1, 3, 2, 4}), boost::test_tools::per_element());
  const Tensor scalars = stack({scalar_tensor(1.0), scalar_tensor(2.0), scalar_tensor(3.0)});
  BOOST_TEST(scalars.shape() == Shape({3}));
  BOOST_TEST(values_of(scalars) == Values({1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(stack({matrix(), matrix(), matrix()}, 1).shape() == Shape({2, 3, 3}));
}

BOOST_AUTO_TEST_CASE(select_removes_the_dim_and_counts_negative_indices_from_the_end) {
  const Tensor m = matrix();
  BOOST_TEST(values_of(select(m, 0, 1)) == Values({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(values_of(select(m, 0, -2)) == Values({0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(values_of(select(m, 1, -1)) == Values({2, 5}), boost::test_tools::per_element());
  BOOST_TEST(values_of(m.select(-1, 0)) == Values({0, 3}), boost::test_tools::per_element());
  BOOST_TEST(values_of(m[1]) == Values({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(select(m, 1, 2).shape() == Shape({2}));
  const Tensor v = tensor(Values{7, 8, 9}, {3});
  BOOST_TEST(select(v, 0, -1).shape() == Shape({}));
  BOOST_TEST(select(v, 0, -1).item<double>() == 9.0);
  // x[i, j, k] = 12 i + 4 j + k: the middle dim at j = 2 leaves 8, 9, 10, 11 and 20, 21, 22, 23.
  BOOST_TEST(values_of(select(counting({2, 3, 4}), 1, 2)) == Values({8, 9, 10, 11, 20, 21, 22, 23}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slice_follows_python_slicing_with_clamping) {
  const Tensor v = counting({10});
  BOOST_TEST(values_of(slice(v, 0, 2, 5)) == Values({2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(values_of(slice(v, 0, -3, 100)) == Values({7, 8, 9}), boost::test_tools::per_element());
  BOOST_TEST(values_of(slice(v, 0, -100, 2)) == Values({0, 1}), boost::test_tools::per_element());
  BOOST_TEST(values_of(slice(v, 0, 1, -7)) == Values({1, 2}), boost::test_tools::per_element());
  BOOST_TEST(slice(v, 0, 5, 5).shape() == Shape({0}));  // start == end: empty
  BOOST_TEST(slice(v, 0, 7, 3).shape() == Shape({0}));  // start > end: empty
  BOOST_TEST(slice(v, 0, 20, 30).shape() == Shape({0}));
  const Tensor m = matrix();
  BOOST_TEST(values_of(slice(m, 1, 1, 3)) == Values({1, 2, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(values_of(m.slice(-1, -1, 3)) == Values({2, 5}), boost::test_tools::per_element());
  BOOST_TEST(values_of(slice(m, 0, 1, 2)) == Values({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(slice(m, 1, -1, -1).shape() == Shape({2, 0}));
}

// ---- every dtype -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_op_moves_the_same_elements_in_every_dtype) {
  struct Row {
    const char* name;
    Shape shape;
    Values values;  // in terms of m's values 0..5; a bool tensor holds v != 0
    std::function<Tensor(const Tensor&)> op;
  };
  // clang-format off
  const std::vector<Row> rows = {
      {"reshape",     {3, 2},    {0, 1, 2, 3, 4, 5}, [](auto& m) { return reshape(m, {3, -1}); }},
      {"view",        {6},       {0, 1, 2, 3, 4, 5}, [](auto& m) { return view(m, {6}); }},
      {"flatten",     {6},       {0, 1, 2, 3, 4, 5}, [](auto& m) { return flatten(m); }},
      {"unsqueeze",   {2, 1, 3}, {0, 1, 2, 3, 4, 5}, [](auto& m) { return unsqueeze(m, 1); }},
      {"squeeze",     {2, 3},    {0, 1, 2, 3, 4, 5}, [](auto& m) { return squeeze(m.view({1, 2, 1, 3})); }},
      {"squeeze dim", {2, 3},    {0, 1, 2, 3, 4, 5}, [](auto& m) { return squeeze(m.view({2, 1, 3}), 1); }},
      {"permute",     {3, 2},    {0, 3, 1, 4, 2, 5}, [](auto& m) { return permute(m, {1, 0}); }},
      {"transpose",   {3, 2},    {0, 3, 1, 4, 2, 5}, [](auto& m) { return transpose(m, 0, 1); }},
      {"t",           {3, 2},    {0, 3, 1, 4, 2, 5}, [](auto& m) { return t(m); }},
      {"select",      {2},       {1, 4},             [](auto& m) { return select(m, 1, 1); }},
      {"slice",       {2, 2},    {1, 2, 4, 5},       [](auto& m) { return slice(m, 1, 1, 3); }},
      {"cat",   {2, 6},    {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, [](auto& m) { return cat({m, m}, 1); }},
      {"stack", {2, 3, 2}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, [](auto& m) { return stack({m, m}, 2); }},
  };
  // clang-format on
  for (const Dtype dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    for (const Row& row : rows) {
      BOOST_TEST_CONTEXT(row.name << " on " << dtype_name(dtype)) {
        const Tensor out = row.op(matrix(dtype));
        Values expected = row.values;
        if (dtype == kBool) {
          for (double& v : expected) v = v != 0 ? 1 : 0;
        }
        BOOST_TEST(dtype_name(out.dtype()) == dtype_name(dtype));
        BOOST_TEST(out.shape() == row.shape);
        BOOST_TEST(values_of(out) == expected, boost::test_tools::per_element());
      }
    }
  }
}

// ---- gradients ---------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_shape_op_backward_matches_finite_differences) {
  using Inputs = std::vector<Tensor>;
  struct Row {
    const char* name;
    std::vector<Shape> shapes;
    std::function<Tensor(const Inputs&)> f;
  };
  // clang-format off
  const std::vector<Row> rows = {
      {"reshape",                {{2, 3, 4}},    [](auto& x) { return reshape(x[0], {4, -1}); }},
      {"reshape to 1-d",         {{2, 3, 4}},    [](auto& x) { return reshape(x[0], {-1}); }},
      {"view",                   {{2, 3, 4}},    [](auto& x) { return view(x[0], {6, 4}); }},
      {"flatten",                {{2, 3, 4}},    [](auto& x) { return flatten(x[0]); }},
      {"flatten negative dims",  {{2, 3, 4, 2}}, [](auto& x) { return flatten(x[0], -3, -2); }},
      {"unsqueeze",              {{2, 3}},       [](auto& x) { return unsqueeze(x[0], 1); }},
      {"unsqueeze negative dim", {{2, 3}},       [](auto& x) { return unsqueeze(x[0], -1); }},
      {"squeeze",                {{2, 1, 3, 1}}, [](auto& x) { return squeeze(x[0]); }},
      {"squeeze negative dim",   {{2, 1, 3}},    [](auto& x) { return squeeze(x[0], -2); }},
      {"permute",                {{2, 3, 4}},    [](auto& x) { return permute(x[0], {2, 0, 1}); }},
      {"permute negative dims",  {{2, 3, 4}},    [](auto& x) { return permute(x[0], {-2, -1, 0}); }},
      {"transpose",              {{2, 3, 4}},    [](auto& x) { return transpose(x[0], 0, 2); }},
      {"transpose negative dims", {{2, 3, 4}},   [](auto& x) { return transpose(x[0], -1, -2); }},
      {"t",                      {{3, 4}},       [](auto& x) { return t(x[0]); }},
      {"t of a vector",          {{5}},          [](auto& x) { return t(x[0]); }},
      {"cat dim 0",               {{1, 3}, {2, 3}, {3, 3}},          [](auto& x) { return cat(x, 0); }},
      {"cat middle dim",          {{2, 1, 4}, {2, 3, 4}, {2, 2, 4}}, [](auto& x) { return cat(x, 1); }},
      {"cat negative middle dim", {{2, 1, 4}, {2, 3, 4}, {2, 2, 4}}, [](auto& x) { return cat(x, -2); }},
      {"cat last dim",            {{2, 3, 1}, {2, 3, 2}, {2, 3, 3}}, [](auto& x) { return cat(x, -1); }},
      {"stack dim 0",               {{2, 4}, {2, 4}, {2, 4}}, [](auto& x) { return stack(x, 0); }},
      {"stack middle dim",          {{2, 4}, {2, 4}, {2, 4}}, [](auto& x) { return stack(x, 1); }},
      {"stack negative middle dim", {{2, 4}, {2, 4}, {2, 4}}, [](auto& x) { return stack(x, -2); }},
      {"stack last dim",            {{2, 4}, {2, 4}, {2, 4}}, [](auto& x) { return stack(x, -1); }},
      {"select dim 0",  {{2, 3, 4}}, [](auto& x) { return select(x[0], 0, 1); }},
      {"select dim 1",  {{2, 3, 4}}, [](auto& x) { return select(x[0], 1, -1); }},
      {"select dim 2",  {{2, 3, 4}}, [](auto& x) { return select(x[0], 2, 2); }},
      {"select dim -1", {{2, 3, 4}}, [](auto& x) { return select(x[0], -1, -4); }},
      {"slice dim 0",   {{3, 3, 4}}, [](auto& x) { return slice(x[0], 0, 1, 3); }},
      {"slice dim 1",   {{2, 3, 4}}, [](auto& x) { return slice(x[0], 1, -2, 100); }},
      {"slice dim 2",   {{2, 3, 4}}, [](auto& x) { return slice(x[0], 2, 1, -1); }},
      {"slice dim -1",  {{2, 3, 4}}, [](auto& x) { return slice(x[0], -1, -3, 3); }},
      {"reshape, permute, select", {{2, 3, 4}},
       [](auto& x) { return select(permute(reshape(x[0], {4, 6}), {1, 0}), 1, 2); }},
  };
  // clang-format on
  Generator generator(0);
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.name) {
      Inputs inputs;
      for (const Shape& shape : row.shapes) {
        inputs.push_back(randn(shape, generator, {.dtype = kFloat64, .requires_grad = true}));
      }
      try {
        BOOST_TEST(gradcheck(row.f, inputs));
      } catch (const std::exception& e) {
        BOOST_ERROR(e.what());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(select_and_slice_put_the_gradient_back_into_zeros) {
  Tensor m = matrix();
  m.requires_grad_();
  select(m, 1, -1).backward(tensor(Values{10, 20}, {2}, {.dtype = kFloat64}));
  BOOST_TEST(values_of(m.grad()) == Values({0, 0, 10, 0, 0, 20}), boost::test_tools::per_element());

  m.set_grad(Tensor());
  slice(m, 0, 1, 5).backward(tensor(Values{1, 2, 3}, {1, 3}, {.dtype = kFloat64}));
  BOOST_TEST(values_of(m.grad()) == Values({0, 0, 0, 1, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(permute_backward_applies_the_inverse_permutation) {
  // out[k, i, j] = x[i, j, k], so grad_x[i, j, k] = grad[k, i, j]: with grad = 0..23 in [4, 2, 3],
  // grad_x[i, j, k] = 6 k + 3 i + j.
  Tensor x = zeros({2, 3, 4}, {.dtype = kFloat64, .requires_grad = true});
  permute(x, {2, 0, 1}).backward(counting({4, 2, 3}));
  Values expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) expected.push_back(6 * k + 3 * i + j);
    }
  }
  BOOST_TEST(values_of(x.grad()) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(gradients_flow_in_float32) {
  Tensor x = matrix(kFloat32);
  x.requires_grad_();
  t(x).backward(tensor(Values{10, 20, 30, 40, 50, 60}, {3, 2}));
  BOOST_TEST(dtype_name(x.grad().dtype()) == dtype_name(kFloat32));
  BOOST_TEST(values_of(x.grad()) == Values({10, 30, 50, 20, 40, 60}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cat_sends_each_input_its_slice_in_its_own_dtype) {
  Tensor a = tensor(Values{1, 2}, {2});  // float32
  a.requires_grad_();
  Tensor b = tensor(Values{3}, {1}, {.dtype = kFloat64, .requires_grad = true});
  const Tensor labels = tensor(std::vector<int64_t>{7}, {1});  // int64: no gradient
  const Tensor out = cat({a, labels, b});
  BOOST_TEST(dtype_name(out.dtype()) == dtype_name(kFloat64));
  out.backward(tensor(Values{10, 20, 30, 40}, {4}, {.dtype = kFloat64}));
  BOOST_TEST(dtype_name(a.grad().dtype()) == dtype_name(kFloat32));
  BOOST_TEST(values_of(a.grad()) == Values({10, 20}), boost::test_tools::per_element());
  BOOST_TEST(values_of(b.grad()) == Values({40}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cat_of_one_tensor_twice_adds_both_slices) {
  Tensor x = matrix();
  x.requires_grad_();
  cat({x, x}, 0).backward(counting({4, 3}));
  BOOST_TEST(values_of(x.grad()) == Values({6, 8, 10, 12, 14, 16}), boost::test_tools::per_element());
}

// PyTorch 1.13 (checked): torch.cat([torch.zeros(0, dtype=torch.float64), b]) with b [2, 3] gives
// b's values as float64, and the skipped input's gradient is an empty tensor of shape [0].
BOOST_AUTO_TEST_CASE(cat_skips_1d_empty_tensors_as_pytorch) {
  Tensor empty = zeros({0}, {.dtype = kFloat64, .requires_grad = true});
  Tensor b = tensor(Values{1, 2, 3, 4, 5, 6}, {2, 3});
  b.requires_grad_();
  const Tensor out = cat({empty, b});
  BOOST_TEST(out.shape() == Shape({2, 3}));
  BOOST_TEST(dtype_name(out.dtype()) == "float64");
  BOOST_TEST(values_of(out) == Values({1, 2, 3, 4, 5, 6}), boost::test_tools::per_element());
  out.sum().backward();
  BOOST_TEST(empty.grad().shape() == Shape({0}));
  BOOST_TEST(values_of(b.grad()) == Values({1, 1, 1, 1, 1, 1}), boost::test_tools::per_element());

  BOOST_TEST(cat({b.detach(), zeros({0})}, 1).shape() == Shape({2, 3}));  // dim from the first kept tensor
  BOOST_TEST(cat({zeros({0}), zeros({0})}).shape() == Shape({0}));
  BOOST_TEST(cat({zeros({0}), zeros({3})}).shape() == Shape({3}));
  // Only [0] is skipped: [0, 3] against [2, 2] is still a mismatch.
  BOOST_CHECK_THROW(cat({zeros({0, 3}), zeros({2, 2})}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(each_op_records_pytorchs_grad_fn_name) {
  Tensor x = zeros({2, 1, 3}, {.dtype = kFloat64, .requires_grad = true});
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {reshape(x, {6}), "ReshapeAliasBackward0"},  // PyTorch 1.13's names, read off its grad_fn
      {view(x, {3, 2}), "ViewBackward0"},
      {flatten(x), "ReshapeAliasBackward0"},
      {unsqueeze(x, 0), "UnsqueezeBackward0"},
      {squeeze(x), "SqueezeBackward0"},
      {squeeze(x, 1), "SqueezeBackward1"},
      {permute(x, {2, 1, 0}), "PermuteBackward0"},
      {transpose(x, 0, 2), "TransposeBackward0"},
      {t(x[0]), "TBackward0"},
      {cat({x, x}), "CatBackward0"},
      {stack({x, x}), "StackBackward0"},
      {select(x, 2, 0), "SelectBackward0"},
      {slice(x, 2, 0, 1), "SliceBackward0"},
  };
  for (const auto& [out, name] : cases) {
    BOOST_TEST(out.requires_grad());
    BOOST_TEST(!out.is_leaf());
    BOOST_TEST(out.grad_fn()->name() == name);
  }
  BOOST_TEST(reshape(matrix(), {6}).is_leaf());  // nothing requires grad: nothing recorded
  // flatten over a single dim merges nothing: PyTorch returns the tensor itself, no new node.
  BOOST_TEST(flatten(x, 1, 1).impl() == x.impl());
}

// ---- storage ---------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_shares_storage_with_its_input_as_pytorch_views_do) {
  Tensor x = matrix(kFloat32);
  Tensor y = reshape(x, {3, 2});
  BOOST_TEST(y.data_ptr<float>() == x.data_ptr<float>());
  y.data_ptr<float>()[4] = 100;  // y[2, 0] is x[1, 1]
  BOOST_TEST(x.at({1, 1}) == 100.0);
  x.data_ptr<float>()[0] = -1;
  BOOST_TEST(y.at({0, 0}) == -1.0);
}

BOOST_AUTO_TEST_CASE(view_flatten_unsqueeze_and_squeeze_share_storage_too) {
  Tensor x = matrix(kInt64);
  for (Tensor y : {view(x, {6}), flatten(x), unsqueeze(x, 0), squeeze(unsqueeze(x, 2))}) {
    y.data_ptr<int64_t>()[5] = 42;
    BOOST_TEST(x.at({1, 2}) == 42.0);
    x.data_ptr<int64_t>()[5] = 5;
  }
}

BOOST_AUTO_TEST_CASE(permute_select_slice_and_cat_return_copies) {
  Tensor x = matrix();
  for (Tensor y : {permute(x, {0, 1}), transpose(x, 0, 0), select(x, 0, 0), slice(x, 0, 0, 2), cat({x})}) {
    y.data_ptr<double>()[0] = 100;
    BOOST_TEST(x.at({0, 0}) == 0.0);
  }
}

// ---- errors --------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_rejects_a_shape_with_another_element_count) {
  const Tensor x = zeros({3, 4});
  BOOST_CHECK_EXCEPTION(reshape(x, {3, 5}), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()) == "reshape: shape [3, 5] is invalid for input of size 12";
  });
  BOOST_CHECK_EXCEPTION(reshape(x, {5, -1}), std::invalid_argument,
                        message_has({"reshape: shape [5, -1] is invalid for input of size 12"}));
  BOOST_CHECK_EXCEPTION(view(x, {13}), std::invalid_argument,
                        message_has({"view: shape [13] is invalid for input of size 12"}));
}

BOOST_AUTO_TEST_CASE(reshape_rejects_two_inferred_dims_and_negative_sizes) {
  const Tensor x = zeros({3, 4});
  BOOST_CHECK_EXCEPTION(reshape(x, {-1, -1}), std::invalid_argument,
                        message_has({"reshape", "only one dimension can be inferred", "[-1, -1]"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {-2, -6}), std::invalid_argument,
                        message_has({"reshape", "invalid size -2", "[-2, -6]"}));
  BOOST_CHECK_EXCEPTION(reshape(zeros({0, 4}), {0, -1}), std::invalid_argument,
                        message_has({"reshape", "0 elements", "[0, -1]"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {0, -1}), std::invalid_argument,
                        message_has({"reshape: shape [0, -1] is invalid for input of size 12"}));
}

BOOST_AUTO_TEST_CASE(flatten_rejects_start_after_end_and_dims_out_of_range) {
  const Tensor x = zeros({2, 3, 4});
  BOOST_CHECK_EXCEPTION(flatten(x, 2, 1), std::invalid_argument,
                        message_has({"flatten", "start_dim 2", "end_dim 1"}));
  BOOST_CHECK_EXCEPTION(flatten(x, 0, 3), std::out_of_range, message_has({"flatten", "dim 3", "[2, 3, 4]"}));
}

BOOST_AUTO_TEST_CASE(unsqueeze_and_squeeze_reject_dims_out_of_range) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(unsqueeze(m, 3), std::out_of_range, message_has({"unsqueeze", "dim 3", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(unsqueeze(m, -4), std::out_of_range, message_has({"unsqueeze", "dim -4"}));
  BOOST_CHECK_EXCEPTION(squeeze(m, 2), std::out_of_range, message_has({"squeeze", "dim 2", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(squeeze(m, -3), std::out_of_range, message_has({"squeeze", "dim -3"}));
}

BOOST_AUTO_TEST_CASE(permute_rejects_anything_but_a_permutation) {
  const Tensor x = zeros({2, 3, 4});
  BOOST_CHECK_EXCEPTION(permute(x, {1, 0}), std::invalid_argument,
                        message_has({"permute", "[1, 0]", "[2, 3, 4]"}));
  BOOST_CHECK_EXCEPTION(permute(x, {0, 1, -3}), std::invalid_argument,
                        message_has({"permute", "[0, 1, -3]", "not a permutation", "dim 0 appears twice"}));
  BOOST_CHECK_EXCEPTION(permute(x, {0, 1, 3}), std::out_of_range,
                        message_has({"permute", "dim 3", "[2, 3, 4]"}));
}

BOOST_AUTO_TEST_CASE(transpose_rejects_dims_out_of_range) {
  BOOST_CHECK_EXCEPTION(transpose(zeros({2, 3}), 0, 2), std::out_of_range,
                        message_has({"transpose", "dim 2", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(transpose(zeros({2, 3}), -3, 0), std::out_of_range,
                        message_has({"transpose", "dim -3"}));
}

BOOST_AUTO_TEST_CASE(t_rejects_more_than_two_dims) {
  BOOST_CHECK_EXCEPTION(t(zeros({2, 3, 4})), std::invalid_argument,
                        message_has({"t:", "at most 2 dims", "[2, 3, 4]"}));
}

BOOST_AUTO_TEST_CASE(cat_rejects_an_empty_list) {
  BOOST_CHECK_EXCEPTION(cat({}), std::invalid_argument, message_has({"cat", "non-empty"}));
}

BOOST_AUTO_TEST_CASE(cat_rejects_sizes_that_differ_outside_the_dim) {
  const Tensor a = zeros({2, 3});
  BOOST_CHECK_EXCEPTION(
      cat({a, a, zeros({3, 3})}, 1), std::invalid_argument,
      message_has({"cat", "except in dim 1", "tensor 0 has shape [2, 3]", "tensor 2 has shape [3, 3]"}));
  BOOST_CHECK_EXCEPTION(cat({a, zeros({2, 3, 1})}), std::invalid_argument,
                        message_has({"cat", "tensor 1 has shape [2, 3, 1]"}));
}

BOOST_AUTO_TEST_CASE(cat_rejects_zero_dim_tensors_and_dims_out_of_range) {
  BOOST_CHECK_EXCEPTION(cat({scalar_tensor(1.0)}), std::invalid_argument,
                        message_has({"cat", "tensor 0", "0-d"}));
  BOOST_CHECK_EXCEPTION(cat({zeros({2}), scalar_tensor(1.0)}), std::invalid_argument,
                        message_has({"cat", "tensor 1", "0-d"}));
  BOOST_CHECK_EXCEPTION(cat({zeros({2, 3})}, 2), std::out_of_range, message_has({"cat", "dim 2", "[2, 3]"}));
}

BOOST_AUTO_TEST_CASE(stack_rejects_an_empty_list_unequal_shapes_and_dims_out_of_range) {
  BOOST_CHECK_EXCEPTION(stack({}), std::invalid_argument, message_has({"stack", "non-empty"}));
  BOOST_CHECK_EXCEPTION(stack({zeros({2, 3}), zeros({2, 4})}), std::invalid_argument,
                        message_has({"stack", "tensor 0 has shape [2, 3]", "tensor 1 has shape [2, 4]"}));
  BOOST_CHECK_EXCEPTION(stack({zeros({2, 3})}, 3), std::out_of_range,
                        message_has({"stack", "dim 3", "[2, 3]"}));
}

BOOST_AUTO_TEST_CASE(select_rejects_an_index_out_of_range_naming_index_dim_and_shape) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(select(m, 1, 3), std::out_of_range,
                        message_has({"select", "index 3", "dim 1", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(select(m, -1, -4), std::out_of_range,
                        message_has({"select", "index -4", "dim 1", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(m[2], std::out_of_range, message_has({"select", "index 2", "dim 0", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(select(zeros({0}), 0, 0), std::out_of_range,
                        message_has({"select", "index 0", "[0]"}));
}

BOOST_AUTO_TEST_CASE(select_and_slice_reject_zero_dim_tensors_and_dims_out_of_range) {
  BOOST_CHECK_EXCEPTION(select(scalar_tensor(1.0), 0, 0), std::invalid_argument,
                        message_has({"select", "0-d"}));
  BOOST_CHECK_EXCEPTION(slice(scalar_tensor(1.0), 0, 0, 1), std::invalid_argument,
                        message_has({"slice", "0-d"}));
  BOOST_CHECK_EXCEPTION(select(matrix(), 2, 0), std::out_of_range,
                        message_has({"select", "dim 2", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(slice(matrix(), -3, 0, 1), std::out_of_range,
                        message_has({"slice", "dim -3", "[2, 3]"}));
}

BOOST_AUTO_TEST_CASE(shape_ops_reject_undefined_tensors) {
  const Tensor undefined;
  BOOST_CHECK_EXCEPTION(reshape(undefined, {1}), std::invalid_argument,
                        message_has({"reshape", "undefined"}));
  BOOST_CHECK_EXCEPTION(permute(undefined, {}), std::invalid_argument, message_has({"permute", "undefined"}));
  BOOST_CHECK_EXCEPTION(cat({matrix(), undefined}), std::invalid_argument, message_has({"cat", "undefined"}));
  BOOST_CHECK_EXCEPTION(slice(undefined, 0, 0, 1), std::invalid_argument,
                        message_has({"slice", "undefined"}));
}

BOOST_AUTO_TEST_SUITE_END()

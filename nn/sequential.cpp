// nn::Sequential: indexing with Python's negative indices, and the forward loop.
//
// The layers are owned by the module tree (registered as children "0", "1", ...); Sequential
// keeps them in order and feeds each one's output to the next.
#include "nn/sequential.hpp"

#include "autograd/op_support.hpp"

namespace minigrad::nn {

using minigrad::detail::check;

Module& Sequential::operator[](int64_t index) const {
  const int64_t n = size();
  check<std::out_of_range>(index >= -n && index < n, "Sequential: index ", index, " is out of range for ", n,
                           n == 1 ? " layer" : " layers");
  return *layers_[index < 0 ? index + n : index];
}

void Sequential::check_type(bool ok, int64_t index, const Module& layer, const std::type_info& wanted) {
  check(ok, "Sequential::at: layer ", index, " is a ", layer.name(), ", not a ",
        detail::short_type_name(wanted));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (Module& layer : *this) x = layer(x);
  return x;
}

}  // namespace minigrad::nn

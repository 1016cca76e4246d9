// Names and sizes of the four dtypes.
#include "autograd/dtype.hpp"

#include <ostream>

namespace minigrad {

std::string dtype_name(Dtype dtype) {
  switch (dtype) {
    case kBool:
      return "bool";
    case kInt64:
      return "int64";
    case kFloat32:
      return "float32";
    case kFloat64:
      break;
  }
  return "float64";
}

std::ostream& operator<<(std::ostream& os, Dtype dtype) { return os << dtype_name(dtype); }

std::size_t element_size(Dtype dtype) {
  return dispatch(dtype, []<typename T>() { return sizeof(T); });
}

}  // namespace minigrad

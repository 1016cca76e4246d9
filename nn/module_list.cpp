// nn::ModuleList: indexing with Python's negative indices. The modules are owned by the module
// tree (registered as children "0", "1", ...); the list keeps them in order.
#include "nn/module_list.hpp"

#include "autograd/op_support.hpp"

namespace minigrad::nn {

using minigrad::detail::check;

Module& ModuleList::operator[](int64_t index) const {
  const int64_t n = size();
  check<std::out_of_range>(index >= -n && index < n, "ModuleList: index ", index, " is out of range for ", n,
                           n == 1 ? " module" : " modules");
  return *modules_[index < 0 ? index + n : index];
}

void ModuleList::check_type(bool ok, int64_t index, const Module& module, const std::type_info& wanted) {
  check(ok, "ModuleList::at: module ", index, " is a ", module.name(), ", not a ",
        detail::short_type_name(wanted));
}

}  // namespace minigrad::nn

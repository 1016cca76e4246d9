// Drawing the autograd graph: to_dot writes the ops behind a tensor in Graphviz's DOT language.
//
// Every op that recorded a node becomes a box labelled with its grad_fn name and output shape
// (`AddmmBackward0 [1, 512]`); every leaf becomes a box labelled with its name when one is given
// (`net.0.weight [512, 128]`, pass a Module's named_parameters()) or `input [1, 128]`; arrows run
// from each op's inputs to the op, and the tensor drawn from is highlighted. It is the picture
// torchviz's make_dot draws in Python. Render it with Graphviz: `dot -Tsvg graph.dot -o graph.svg`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad {

/// What to add under each box's first line.
struct DotOptions {
  bool show_data = false;  ///< the tensor's values summarised: `data min=-0.5 max=1.2 mean=0.03`
  bool show_grad = false;  ///< its .grad() summarised the same way, where defined (after backward)
};

/// The graph that produced `root`, as a DOT `digraph` (one box per tensor: ops light gray, leaves
/// that require grad light blue, other leaves white, `root` green with a thick border). `names`
/// labels tensors by identity, e.g. a Module's named_parameters(); an unnamed leaf is "input"
/// ("scalar 0.5" for a one-element constant). Boxes are numbered t0 (the root), t1, ... in the
/// order the walk meets them, so the text is the same on every run. A tensor used twice (a + a)
/// gets two arrows. Iterative: graphs of any depth. Throws std::invalid_argument for an undefined
/// root or an undefined tensor in `names`.
std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names = {},
                   DotOptions options = {});

}  // namespace minigrad

// Everything in data/ in one include: feeding a training loop, as torch.utils.data (Dataset,
// TensorDataset, DataLoader, random_split), CSV files, the data sets of the examples and the text
// helpers of the language models (CharVocab, get_batch).
#pragma once

/// \namespace minigrad::data
/// Feeding a training loop, as `torch.utils.data`: TensorDataset, DataLoader, CSV files and the
/// data sets of the examples (iris, digits, toy sets).

#include "data/csv.hpp"
#include "data/dataloader.hpp"
#include "data/datasets.hpp"
#include "data/text.hpp"

// Command-line flags for the training examples: `fit_spiral --steps 500 --lr 0.01 --resume`.
//
// Not part of minigrad: a few lines so that each example can offer the knobs a learner wants to
// turn (how long to train, how fast, where the data is, whether to continue from a checkpoint)
// without a parsing library. A flag is `--name value` or `--name=value`; a switch is `--name`.
// Every flag an example does not ask for is an error, so a typo (`--stpes`) never goes unnoticed.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace support {

class Flags {
 public:
  /// Keeps the arguments after the program name; `--help` prints `usage` and ends the program.
  Flags(int argc, char** argv, std::string usage) : usage_(std::move(usage)) {
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (word == "--help" || word == "-h") {
        std::cout << usage_;
        std::exit(0);
      }
      const size_t equals = word.find('=');
      if (word.rfind("--", 0) == 0 && equals != std::string::npos) {  // --name=value: two words
        words_.push_back(word.substr(0, equals));
        words_.push_back(word.substr(equals + 1));
      } else {
        words_.push_back(word);
      }
    }
    used_.assign(words_.size(), false);
  }

  /// `--name N`, an integer of at least 1 (a number of steps), or `fallback` when not given.
  /// Throws std::invalid_argument for a missing value, text that is not an integer, or N < 1.
  int64_t integer(const std::string& name, int64_t fallback) {
    const std::string* text = value(name);
    if (text == nullptr) return fallback;
    int64_t result = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), result);
    if (error != std::errc() || end != text->data() + text->size() || result < 1) {
      fail(name + " needs a whole number of at least 1, got '" + *text + "'");
    }
    return result;
  }

  /// `--name X`, a number above 0 (a learning rate), or `fallback` when not given.
  /// Throws std::invalid_argument for a missing value, text that is not a number, or X <= 0.
  double real(const std::string& name, double fallback) {
    const std::string* text = value(name);
    if (text == nullptr) return fallback;
    double result = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), result);
    if (error != std::errc() || end != text->data() + text->size() || !(result > 0)) {
      fail(name + " needs a number above 0, got '" + *text + "'");
    }
    return result;
  }

  /// `--name TEXT` (a file path), or `fallback` when not given.
  std::string text(const std::string& name, const std::string& fallback) {
    const std::string* text = value(name);
    return text == nullptr ? fallback : *text;
  }

  /// True when the switch `--name` is given (it takes no value).
  bool is_set(const std::string& name) {
    const int64_t at = find(name);
    if (at >= 0) used_[at] = true;
    return at >= 0;
  }

  /// Throws std::invalid_argument naming the first argument no call above has used.
  void check_all_used() const {
    for (size_t i = 0; i < words_.size(); ++i) {
      if (!used_[i]) fail("unknown argument '" + words_[i] + "'");
    }
  }

 private:
  int64_t find(const std::string& name) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      if (words_[i] == name) return static_cast<int64_t>(i);
    }
    return -1;
  }

  // The word after `name`, or nullptr when `name` is not given.
  const std::string* value(const std::string& name) {
    const int64_t at = find(name);
    if (at < 0) return nullptr;
    if (at + 1 >= static_cast<int64_t>(words_.size())) fail(name + " needs a value");
    used_[at] = used_[at + 1] = true;
    return &words_[at + 1];
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw std::invalid_argument(problem + "\n" + usage_);
  }

  std::string usage_;
  std::vector<std::string> words_;
  std::vector<bool> used_;
};

}  // namespace support

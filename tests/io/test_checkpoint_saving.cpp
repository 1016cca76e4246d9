// Saving a checkpoint where others save too, or where someone has planted traps: several threads
// and processes saving to one path at once (each load sees one writer's complete file), symlinks
// at the temporary name and at the path (never followed), a file name at the 255-byte limit, and
// the temporary files a killed save leaves behind (removed once provably abandoned).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autograd/ops.hpp"
#include "io/safetensors.hpp"

namespace {

using namespace minigrad;
namespace fs = std::filesystem;

/// A new empty folder under the system's temporary folder, deleted with its contents afterwards.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "minigrad-checkpoint-XXXXXX").string();
    BOOST_TEST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(path)) out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

constexpr int64_t kElements = 1 << 16;  // 256 KB of float32: saves long enough to overlap

/// What writer `id` saves: its id in a header field, an I64 tensor and every weight.
nn::NamedTensors checkpoint_of(int id) {
  return {{"weight", full({kElements}, id)}, {"writer", scalar_tensor(id, {.dtype = kInt64})}};
}

/// An empty string if `path` loads as one writer's complete checkpoint, else what is wrong. One
/// load_file call: the file is opened once, so another writer's rename cannot mix into the read.
std::string problem_with(const std::string& path) {
  try {
    const nn::NamedTensors loaded = load_file(path);
    if (loaded.size() != 2 || loaded[0].first != "writer") return "the checkpoint lacks its tensors";
    const auto id = static_cast<float>(loaded[0].second.item<int64_t>());  // I64 comes first in the file
    const std::vector<float> weight = loaded[1].second.to_vector<float>();
    const bool whole = std::all_of(weight.begin(), weight.end(), [&](float x) { return x == id; });
    return whole ? "" : "its weights mix two writers";
  } catch (const std::exception& error) {
    return error.what();
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_saving)

BOOST_AUTO_TEST_CASE(threads_saving_to_one_path_never_leave_a_torn_or_mixed_checkpoint) {
  constexpr int kWriters = 4, kSaves = 15;
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  save_file(checkpoint_of(0), path, {{"writer", "0"}});

  std::atomic<bool> writing{true};
  std::vector<std::string> save_errors(kWriters), load_errors;  // Boost.Test checks run in this thread
  std::vector<std::thread> writers;
  for (int id = 1; id <= kWriters; ++id) {
    writers.emplace_back([&, id] {
      const nn::NamedTensors mine = checkpoint_of(id);
      for (int i = 0; i < kSaves; ++i) {
        try {
          save_file(mine, path, {{"writer", std::to_string(id)}});
        } catch (const std::exception& error) {
          save_errors[id - 1] = error.what();
        }
      }
    });
  }
  std::thread reader([&] {
    while (writing.load()) {
      const std::string problem = problem_with(path);
      if (!problem.empty()) load_errors.push_back(problem);
    }
  });
  for (std::thread& writer : writers) writer.join();
  writing = false;
  reader.join();

  for (const std::string& error : save_errors) BOOST_TEST(error.empty(), "a save threw: " << error);
  BOOST_TEST(load_errors.empty(), load_errors.size() << " loads failed, the first: "
                                                     << (load_errors.empty() ? "" : load_errors[0]));
  BOOST_TEST(problem_with(path) == "");
  BOOST_TEST(folder.names() == std::vector<std::string>{"model.safetensors"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(processes_saving_to_one_path_never_leave_a_torn_or_mixed_checkpoint) {
  constexpr int kWriters = 4, kSaves = 15;
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  save_file(checkpoint_of(0), path, {{"writer", "0"}});

  std::vector<pid_t> children;
  for (int id = 1; id <= kWriters; ++id) {
    const nn::NamedTensors mine = checkpoint_of(id);  // built before fork: the child only saves
    std::cout.flush();                                // or the child's copy of the buffer prints too
    const pid_t child = ::fork();
    BOOST_TEST_REQUIRE(child >= 0);
    if (child == 0) {
      int status = 0;
      for (int i = 0; i < kSaves; ++i) {
        try {
          save_file(mine, path, {{"writer", std::to_string(id)}});
        } catch (...) {
          status = 1;
        }
      }
      ::_exit(status);
    }
    children.push_back(child);
  }
  std::vector<std::string> problems;
  std::vector<int> statuses(kWriters, -1);  // -1 while a child runs
  while (std::count(statuses.begin(), statuses.end(), -1) > 0) {
    const std::string problem = problem_with(path);
    if (!problem.empty()) problems.push_back(problem);
    for (int i = 0; i < kWriters; ++i) {
      int status = 0;
      if (statuses[i] == -1 && ::waitpid(children[i], &status, WNOHANG) == children[i])
        statuses[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
  }
  BOOST_TEST(statuses == std::vector<int>(kWriters, 0), boost::test_tools::per_element());
  BOOST_TEST(problems.empty(), problems.size()
                                   << " loads failed, the first: " << (problems.empty() ? "" : problems[0]));
  BOOST_TEST(problem_with(path) == "");
  BOOST_TEST(folder.names() == std::vector<std::string>{"model.safetensors"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_symlink_at_the_temporary_name_or_the_path_is_never_followed) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors"), victim = folder.file("victim");
  std::ofstream(victim) << "precious";
  // The names a save used to write: `path.tmp-<pid>`, predictable by anyone who can list processes.
  fs::create_symlink(victim, path + ".tmp-" + std::to_string(::getpid()));
  save_file(checkpoint_of(1), path, {{"writer", "1"}});
  BOOST_TEST(read_bytes(victim) == "precious");
  BOOST_TEST(fs::is_regular_file(fs::symlink_status(path)));
  BOOST_TEST(problem_with(path) == "");

  // A symlink at the path itself is replaced by the new file, not written through.
  fs::remove(path);
  fs::create_symlink(victim, path);
  save_file(checkpoint_of(2), path, {{"writer", "2"}});
  BOOST_TEST(read_bytes(victim) == "precious");
  BOOST_TEST(fs::is_regular_file(fs::symlink_status(path)));
  BOOST_TEST(problem_with(path) == "");
}

BOOST_AUTO_TEST_CASE(a_file_name_of_255_bytes_still_saves) {
  TempFolder folder;
  for (const size_t length : {200u, 254u, 255u}) {
    BOOST_TEST_CONTEXT(length << " bytes") {
      const std::string name = std::string(length - 12, 'm') + ".safetensors";
      const std::string path = folder.file(name);
      BOOST_REQUIRE_NO_THROW(save_file(checkpoint_of(3), path, {{"writer", "3"}}));
      BOOST_TEST(problem_with(path) == "");
      fs::remove(path);
      BOOST_TEST(folder.names().empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_killed_saves_temporary_file_is_removed_once_unlocked_and_10_minutes_old) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  auto plant = [&](const std::string& name, std::chrono::minutes age) {
    std::ofstream(folder.file(name)) << "half a checkpoint";
    const auto then = fs::file_time_type::clock::now() - age;
    fs::last_write_time(folder.file(name), then);
  };
  plant(".model.safetensors.tmp-12345-0-abc", std::chrono::minutes(11));  // abandoned: removed
  plant(".model.safetensors.tmp-12345-1-abc", std::chrono::minutes(1));   // may be a slow save: kept
  plant(".model.safetensors.tmp-12345-2-abc", std::chrono::minutes(11));  // locked by a save: kept
  plant(".other.safetensors.tmp-12345-0-abc", std::chrono::minutes(11));  // another target's: kept
  plant("model.safetensors.tmp-12345", std::chrono::minutes(11));         // not our naming: kept
  const int locked = ::open(folder.file(".model.safetensors.tmp-12345-2-abc").c_str(), O_RDONLY);
  BOOST_TEST_REQUIRE(locked >= 0);
  BOOST_TEST_REQUIRE(::flock(locked, LOCK_EX) == 0);

  save_file(checkpoint_of(4), path, {{"writer", "4"}});
  ::close(locked);
  BOOST_TEST(folder.names() == (std::vector<std::string>{".model.safetensors.tmp-12345-1-abc",
                                                         ".model.safetensors.tmp-12345-2-abc",
                                                         ".other.safetensors.tmp-12345-0-abc",
                                                         "model.safetensors", "model.safetensors.tmp-12345"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(load_file_of_a_named_pipe_throws_instead_of_blocking) {
  TempFolder folder;
  const std::string fifo = folder.file("model.safetensors");
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const auto& load :
       std::vector<std::function<void()>>{[&] { load_file(fifo); }, [&] { load_metadata(fifo); }}) {
    try {
      load();
      BOOST_ERROR("no exception thrown");
    } catch (const std::runtime_error& error) {
      BOOST_TEST(std::string(error.what()).find(fifo + ": not a regular file") != std::string::npos,
                 error.what());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_shape_of_more_than_64_dims_is_refused_by_the_loader) {
  // 50,000 dims of size 1 fit in a 100 KB file; once loaded, printing walked them recursively.
  TempFolder folder;
  for (const size_t dims : {64u, 65u, 50000u}) {
    BOOST_TEST_CONTEXT(dims << " dims") {
      std::string shape = "[1";
      for (size_t i = 1; i < dims; ++i) shape += ",1";
      std::string header = R"({"x":{"dtype":"F32","shape":)" + shape + R"(],"data_offsets":[0,4]}})";
      header.append((8 - header.size() % 8) % 8, ' ');
      std::string bytes;
      for (int i = 0; i < 8; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
      bytes += header + std::string("\0\0\x80\x3f", 4);  // 1.0f
      const std::string path = folder.file("deep.safetensors");
      std::ofstream(path, std::ios::binary) << bytes;
      if (dims == 64) {
        const nn::NamedTensors loaded = load_file(path);
        BOOST_TEST(loaded[0].second.dim() == 64);
        BOOST_TEST(loaded[0].second.to_vector<float>() == std::vector<float>{1.0f},
                   boost::test_tools::per_element());
        continue;
      }
      try {
        load_file(path);
        BOOST_ERROR("no exception thrown");
      } catch (const std::runtime_error& error) {
        const std::string expected = "tensor \"x\": shape has " + std::to_string(dims) +
                                     " dims; only tensors with up to 64 dims are supported";
        BOOST_TEST(std::string(error.what()).find(expected) != std::string::npos, error.what());
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

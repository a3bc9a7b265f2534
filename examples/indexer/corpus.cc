// Deterministic corpus generation: every property of file i and function k is
// a hash of (i, k), so files can name functions of other files without any
// shared state, and the output never depends on the standard library's
// random distributions.
#include "corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace indexer {
namespace {

uint64_t Mix(uint64_t a, uint64_t b) {
  // SplitMix64 finaliser over a combined seed.
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr std::array<const char*, 6> kModules = {"core",  "net", "storage",
                                                 "query", "ui",  "util"};
constexpr std::array<const char*, 10> kVerbs = {
    "open",  "close", "read",  "write", "parse",
    "merge", "scan",  "flush", "seek",  "encode"};
constexpr std::array<const char*, 12> kNouns = {
    "buffer", "socket", "page",  "record", "token",  "window",
    "cursor", "batch",  "frame", "table",  "stream", "cache"};
constexpr std::array<const char*, 8> kWords = {
    "the", "caller", "owns", "result", "retries", "on", "short", "reads"};

template <size_t N>
const char* Pick(const std::array<const char*, N>& words, uint64_t h) {
  return words[h % N];
}

// File sizes are log-spaced over two decades, from one function (40 to 130
// tokens) to kMaxFunctions functions (about 5,000 tokens), with fewer files
// the larger they are, as in a real source tree: the file of size rank r of
// n has exp(ln(kMaxFunctions) * ((r + 0.5) / n)^kSkew) functions (of 120
// files, 37 have one function and 11 have 32 or more). The ranks are a fixed
// shuffle of the files, so big files are spread over the tree and the worker
// threads. Two decades is what `spanprof scaling` needs to tell a linear phase
// from a quadratic one (docs/cli.md, "scaling").
constexpr double kMaxFunctions = 64;
constexpr double kSkew = 2.0;

std::vector<int> FunctionCounts(int files) {
  std::vector<int> order(static_cast<size_t>(files));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [](int a, int b) {
    return Mix(static_cast<uint64_t>(a), 1) < Mix(static_cast<uint64_t>(b), 1);
  });
  std::vector<int> counts(static_cast<size_t>(files));
  for (int rank = 0; rank < files; ++rank) {
    const double q = std::pow((rank + 0.5) / files, kSkew);
    counts[static_cast<size_t>(order[static_cast<size_t>(rank)])] =
        static_cast<int>(std::lround(std::exp(std::log(kMaxFunctions) * q)));
  }
  return counts;
}

std::string FunctionName(int file, int function) {
  const uint64_t h =
      Mix(static_cast<uint64_t>(file), 1000 + static_cast<uint64_t>(function));
  std::string name = Pick(kModules, static_cast<uint64_t>(file));
  for (const std::string& part :
       {std::string(Pick(kVerbs, h)), std::string(Pick(kNouns, h >> 8)),
        std::to_string(file), std::to_string(function)}) {
    name += '_';
    name += part;
  }
  return name;
}

// Appends every piece to `text` (appending avoids GCC 12's false -Wrestrict
// on `"literal" + std::string`).
template <typename... Pieces>
void Append(std::string& text, const Pieces&... pieces) {
  (text.append(pieces), ...);
}

std::string FileText(int file, const std::vector<int>& function_counts) {
  const auto files = static_cast<uint64_t>(function_counts.size());
  auto function_count = [&](int f) {
    return function_counts[static_cast<size_t>(f)];
  };
  std::string text;
  Append(text, "/* generated source file ", std::to_string(file), " */\n\n");
  const int count = function_count(file);
  for (int function = 0; function < count; ++function) {
    const uint64_t h =
        Mix(static_cast<uint64_t>(file) << 20, static_cast<uint64_t>(function));
    text += "/* ";
    for (uint64_t w = 0; w < 4 + h % 6; ++w) {
      Append(text, Pick(kWords, Mix(h, w)), " ");
    }
    Append(text, "*/\nint ", FunctionName(file, function),
           "(int a, int b) {\n");
    const int lines = 3 + static_cast<int>((h >> 16) % 12);
    Append(text, "  int v0 = a + b * ", std::to_string(h % 97), ";\n");
    for (int line = 1; line < lines; ++line) {
      const uint64_t g = Mix(h, 100 + static_cast<uint64_t>(line));
      const std::string var = std::to_string(line);
      const std::string prev = std::to_string(line - 1);
      if (g % 3 == 0) {
        // A call into another file; one in eight names a function that does
        // not exist anywhere (an external library call).
        const int target = static_cast<int>((g >> 8) % files);
        int target_function = static_cast<int>(
            (g >> 24) % static_cast<uint64_t>(function_count(target)));
        if ((g >> 40) % 8 == 0) target_function += function_count(target);
        Append(text, "  int v", var, " = ",
               FunctionName(target, target_function), "(v", prev, ", a);\n");
      } else {
        Append(text, "  int v", var, " = v", prev,
               (g >> 8) % 2 == 0 ? " + " : " ^ ",
               std::to_string((g >> 16) % 1000), ";\n");
      }
    }
    Append(text, "  return v", std::to_string(lines - 1), ";\n}\n\n");
  }
  return text;
}

}  // namespace

CorpusStats GenerateCorpus(const std::filesystem::path& root, int files) {
  const std::filesystem::path marker = root / ".indexer-corpus";
  if (std::filesystem::exists(root) && !std::filesystem::is_empty(root)) {
    if (!std::filesystem::exists(marker)) {
      throw std::runtime_error(std::string("refusing to replace ") +
                               root.string() +
                               ": not a corpus this program generated");
    }
    std::filesystem::remove_all(root);
  }
  std::filesystem::create_directories(root);
  std::ofstream(marker) << "generated by indexer_example\n";
  CorpusStats stats;
  const std::vector<int> function_counts = FunctionCounts(files);
  for (int file = 0; file < files; ++file) {
    const std::filesystem::path dir =
        root / Pick(kModules, static_cast<uint64_t>(file));
    std::filesystem::create_directories(dir);
    const uint64_t h = Mix(static_cast<uint64_t>(file), 7);
    const std::filesystem::path path =
        dir /
        (std::string(Pick(kNouns, h)) + "_" + std::to_string(file) + ".c");
    const std::string text = FileText(file, function_counts);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
      throw std::runtime_error(std::string("cannot write ") + path.string());
    ++stats.files;
    stats.bytes += text.size();
  }
  return stats;
}

}  // namespace indexer

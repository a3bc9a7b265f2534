// The synthetic source tree indexer_example works on: a stand-in for a real
// checkout, generated deterministically so every run indexes the same bytes.
#ifndef SPANPROF_EXAMPLES_INDEXER_CORPUS_H_
#define SPANPROF_EXAMPLES_INDEXER_CORPUS_H_

#include <cstdint>
#include <filesystem>

namespace indexer {

struct CorpusStats {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// `GenerateCorpus()` writes `files` C-like source files under `root`
// (`root/<module>/<name>.c`): functions with comments, arithmetic and calls
// to functions defined in other files, plus some calls to functions defined
// nowhere (like calls into a library). File sizes are log-spaced over two
// decades (about 40 to 5,000 tokens; many small files, few large ones). The
// output depends only on `files`.
// A `root` left by an earlier run (it holds the marker file
// `.indexer-corpus`) is replaced; any other existing, non-empty `root` is
// refused. Throws std::runtime_error when `root` is refused or a file cannot be
// written.
CorpusStats GenerateCorpus(const std::filesystem::path& root, int files);

}  // namespace indexer

#endif  // SPANPROF_EXAMPLES_INDEXER_CORPUS_H_

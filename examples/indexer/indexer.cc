// indexer_example: a small source-code indexer, profiled phase by phase.
//
// It generates a synthetic C-like source tree (deterministic, no network) in
// a work directory, then indexes it the way a code-search tool would:
//
//   corpus.discover   walk the tree, list the .c files          [discover/fs]
//   corpus.process    hand the files to worker threads          [process/pool]
//     worker.run        one per worker thread (a cross-thread child)
//       file.read       read one file                           [read/fs]
//       file.tokenize   split it into tokens                    [parse/lexer]
//       file.parse      find definitions and calls              [parse/parser]
//   symbols.build     the symbol table of every definition      [analyze/index]
//   refs.resolve      resolve every call against it             [analyze/index]
//   index.write       write index.tsv                           [write/fs]
//
// Usage:
//
//   indexer_example [--files N] [--threads N] [--work-dir DIR] [--slow-parse]
//
//   --files N       source files to generate and index (default 120)
//   --threads N     worker threads (default 2)
//   --work-dir DIR  generate the tree (DIR/corpus) and write the index
//                   (DIR/index.tsv) under DIR and keep them (default: a fresh
//                   temporary directory, removed at exit)
//   --slow-parse    use the "refactored" tokenizer that keeps the unread input
//                   in a std::deque<char> and drops each token from its
//                   front, but copies the rest of the file into a string for
//                   the scanner before every token, so it is quadratic in the
//                   file size. Same tokens, same index; only slower, and most
//                   on the largest files. This is the regression the guide
//                   (docs/guide.md) finds with `spanprof compare`, and that
//                   `spanprof scaling` calls superlinear.
//
// Profile it:
//
//   SPANPROF=1 build/demo/bin/indexer_example
//
// Spans carry arguments (`bytes` on file.read, `tokens` on file.tokenize,
// `definitions` and `calls` on file.parse) and the tokenizer counts one
// heartbeat per token, so heartbeats measure the work done independently of
// time: the slow tokenizer does the same number of heartbeats, in more time.
// It also counts the bytes it touches (the named counter `bytes_touched`):
// once per byte in the baseline, the whole rest of the file per token with
// --slow-parse. File sizes span two decades, so
//
//   spanprof scaling build/spanprof-trace.json --size tokens
//
// measures how file.tokenize's time grows with its `tokens`: linear in the
// baseline; with --slow-parse, an exponent near 2, driven by bytes_touched
// (heartbeats only ride along).
#include <spanprof/spanprof.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "corpus.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  int files = 120;
  int threads = 2;
  std::string work_dir;  // empty: a temporary directory
  bool slow_parse = false;
};

constexpr const char kUsage[] =
    "usage: indexer_example [--files N] [--threads N] [--work-dir DIR] "
    "[--slow-parse]\n";

bool ParsePositive(const char* text, int max, int* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > max) return false;
  *out = static_cast<int>(value);
  return true;
}

// Returns false (after printing why) on a bad command line.
bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--slow-parse") {
      options->slow_parse = true;
    } else if (arg == "--files" && has_value) {
      if (!ParsePositive(argv[++i], 100000, &options->files)) {
        std::fprintf(stderr, "indexer_example: --files: expected 1..100000\n");
        return false;
      }
    } else if (arg == "--threads" && has_value) {
      if (!ParsePositive(argv[++i], 256, &options->threads)) {
        std::fprintf(stderr, "indexer_example: --threads: expected 1..256\n");
        return false;
      }
    } else if (arg == "--work-dir" && has_value) {
      options->work_dir = argv[++i];
    } else {
      std::fprintf(stderr, "indexer_example: unknown argument '%s'\n%s",
                   arg.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

// The work directory: the one asked for (kept), or a fresh temporary one
// (removed when the program ends).
class WorkDir {
 public:
  explicit WorkDir(const std::string& requested) {
    if (!requested.empty()) {
      path_ = requested;
      fs::create_directories(path_);
      return;
    }
    std::string pattern =
        (fs::temp_directory_path() / "spanprof-indexer-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory");
    }
    path_ = pattern;
    temporary_ = true;
  }
  ~WorkDir() {
    if (!temporary_) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool temporary_ = false;
};

// ---- Tokenizer ----

enum class TokenKind { kIdentifier, kNumber, kPunct };

struct Token {
  TokenKind kind;
  std::string_view text;  // a view into the file's text
  uint32_t line;
};

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Scans the next token of `input` from `pos`, skipping blanks and comments.
// Returns false at the end. `*start`/`*length` locate the token in `input`;
// `*lines` counts the newlines skipped and crossed.
bool ScanToken(std::string_view input, size_t pos, size_t* start,
               size_t* length, TokenKind* kind, uint32_t* lines) {
  while (pos < input.size()) {
    const char c = input[pos];
    if (c == '\n') {
      ++*lines;
      ++pos;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos;
    } else if (c == '/' && pos + 1 < input.size() && input[pos + 1] == '*') {
      const size_t close = input.find("*/", pos + 2);
      const size_t end =
          close == std::string_view::npos ? input.size() : close + 2;
      *lines += static_cast<uint32_t>(
          std::count(input.begin() + static_cast<std::ptrdiff_t>(pos),
                     input.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
      pos = end;
    } else {
      break;
    }
  }
  if (pos >= input.size()) return false;
  size_t end = pos + 1;
  if (IsIdentStart(input[pos])) {
    while (end < input.size() &&
           (IsIdentStart(input[end]) || IsDigit(input[end]))) {
      ++end;
    }
    *kind = TokenKind::kIdentifier;
  } else if (IsDigit(input[pos])) {
    while (end < input.size() && IsDigit(input[end])) ++end;
    *kind = TokenKind::kNumber;
  } else {
    *kind = TokenKind::kPunct;
  }
  *start = pos;
  *length = end - pos;
  return true;
}

// Both tokenizers count the bytes they touch (`bytes_touched`, a named
// counter of the innermost span, file.tokenize): what the scanner reads, and
// what the slow one copies. It is the tokenizer's work, independent of time.

// The tokenizer: one pass over the text; each byte is touched once.
void Tokenize(std::string_view text, std::vector<Token>& tokens) {
  uint32_t line = 1;
  size_t pos = 0;
  size_t start = 0;
  size_t length = 0;
  TokenKind kind{};
  while (ScanToken(text, pos, &start, &length, &kind, &line)) {
    tokens.push_back({kind, text.substr(start, length), line});
    SPANPROF_COUNT("bytes_touched", start + length - pos);
    pos = start + length;
  }
}

// The --slow-parse tokenizer: the same scanner, but it keeps the unread input
// in a std::deque<char> (dropping a token from the front is cheap there) and
// copies the rest of the file into a string for the scanner before every
// token: the rest of the file once per token.
void TokenizeByConsuming(std::string_view text, std::vector<Token>& tokens) {
  std::deque<char> unread(text.begin(), text.end());
  size_t consumed = 0;  // bytes of `text` dropped from `unread` so far
  uint32_t line = 1;
  size_t start = 0;
  size_t length = 0;
  TokenKind kind{};
  while (true) {
    // The scanner wants contiguous text: the rest of the file, copied.
    const std::string rest(unread.begin(), unread.end());
    if (!ScanToken(rest, 0, &start, &length, &kind, &line)) break;
    SPANPROF_COUNT("bytes_touched", rest.size() + start + length);
    tokens.push_back({kind, text.substr(consumed + start, length), line});
    unread.erase(unread.begin(),
                 unread.begin() + static_cast<std::ptrdiff_t>(start + length));
    consumed += start + length;
  }
}

// ---- Parser ----

struct Definition {
  std::string name;
  uint32_t file = 0;
  uint32_t line = 0;
};

struct FileIndex {
  std::string path;
  uint64_t bytes = 0;
  uint64_t tokens = 0;
  std::vector<Definition> definitions;
  std::vector<std::string> calls;  // names called from this file
};

// Finds `int name(` at brace depth 0 (a definition) and `name(` inside a body
// (a call).
void Parse(const std::vector<Token>& tokens, uint32_t file, FileIndex* out) {
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == TokenKind::kPunct) {
      if (t.text == "{") ++depth;
      if (t.text == "}") --depth;
      continue;
    }
    if (t.kind != TokenKind::kIdentifier || i + 1 >= tokens.size() ||
        tokens[i + 1].text != "(") {
      continue;
    }
    if (depth == 0) {
      if (i > 0 && tokens[i - 1].text == "int") {
        out->definitions.push_back({std::string(t.text), file, t.line});
      }
    } else {
      out->calls.emplace_back(t.text);
    }
  }
}

// ---- Phases ----

std::vector<fs::path> Discover(const fs::path& root) {
  SPANPROF_SCOPE("corpus.discover", {.phase = "discover", .module = "fs"});
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".c") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not stable
  SPANPROF_ARG("files", files.size());
  return files;
}

std::string ReadFile(const fs::path& path) {
  SPANPROF_SCOPE("file.read", {.phase = "read", .module = "fs"});
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(std::string("cannot read ") + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  std::string bytes = std::move(text).str();
  SPANPROF_ARG("bytes", bytes.size());
  return bytes;
}

// `tokens` is the worker's buffer, reused from file to file: a large file
// does not allocate (and fault in) fresh memory for its tokens.
FileIndex IndexFile(const fs::path& path, uint32_t file, bool slow_parse,
                    std::vector<Token>& tokens) {
  FileIndex index;
  index.path = path.string();
  const std::string text = ReadFile(path);
  index.bytes = text.size();
  tokens.clear();
  {
    SPANPROF_SCOPE("file.tokenize", {.phase = "parse", .module = "lexer"});
    if (slow_parse) {
      TokenizeByConsuming(text, tokens);
    } else {
      Tokenize(text, tokens);
    }
    SPANPROF_ARG("tokens", tokens.size());
    spanprof::Heartbeat(tokens.size());
  }
  index.tokens = tokens.size();
  {
    SPANPROF_SCOPE("file.parse", {.phase = "parse", .module = "parser"});
    Parse(tokens, file, &index);
    SPANPROF_ARG("definitions", index.definitions.size());
    SPANPROF_ARG("calls", index.calls.size());
  }
  return index;
}

// Indexes the files on `threads` workers; results keep the input order, so
// the output does not depend on scheduling.
std::vector<FileIndex> ProcessFiles(const std::vector<fs::path>& files,
                                    int threads, bool slow_parse) {
  SPANPROF_SCOPE("corpus.process", {.phase = "process", .module = "pool"});
  std::vector<FileIndex> results(files.size());
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    // Bind: the worker's spans are children of corpus.process, across
    // threads (a flow arrow in the trace).
    workers.emplace_back(spanprof::Bind([&, w] {
      const std::string name = std::string("worker-") + std::to_string(w);
      spanprof::SetThreadName(name.c_str());
      SPANPROF_SCOPE("worker.run", {.module = "pool"});
      try {
        std::vector<Token> tokens;
        for (size_t i = next++; i < files.size(); i = next++) {
          results[i] =
              IndexFile(files[i], static_cast<uint32_t>(i), slow_parse, tokens);
        }
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    }));
  }
  for (std::thread& worker : workers) worker.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return results;
}

using SymbolTable = std::unordered_map<std::string_view, const Definition*>;

SymbolTable BuildSymbols(const std::vector<FileIndex>& files,
                         uint64_t* duplicates) {
  SPANPROF_SCOPE("symbols.build", {.phase = "analyze", .module = "index"});
  SymbolTable symbols;
  for (const FileIndex& file : files) {
    for (const Definition& def : file.definitions) {
      if (!symbols.emplace(def.name, &def).second) ++*duplicates;
    }
  }
  SPANPROF_ARG("symbols", symbols.size());
  return symbols;
}

struct Resolution {
  std::map<std::string_view, uint64_t> callers;     // defined name -> calls
  std::map<std::string_view, uint64_t> unresolved;  // undefined name -> calls
  uint64_t calls = 0;
};

Resolution ResolveCalls(const std::vector<FileIndex>& files,
                        const SymbolTable& symbols) {
  SPANPROF_SCOPE("refs.resolve", {.phase = "analyze", .module = "index"});
  Resolution r;
  for (const FileIndex& file : files) {
    for (const std::string& call : file.calls) {
      ++r.calls;
      if (symbols.contains(call)) {
        ++r.callers[call];
      } else {
        ++r.unresolved[call];
      }
    }
  }
  SPANPROF_ARG("calls", r.calls);
  SPANPROF_ARG("unresolved", r.unresolved.size());
  return r;
}

// Writes one line per definition (name, file:line, callers), sorted by name,
// then the unresolved names. Returns the bytes written.
uint64_t WriteIndex(const fs::path& path, const std::vector<FileIndex>& files,
                    const fs::path& root, const Resolution& resolution) {
  SPANPROF_SCOPE("index.write", {.phase = "write", .module = "fs"});
  std::vector<const Definition*> defs;
  for (const FileIndex& file : files) {
    for (const Definition& def : file.definitions) defs.push_back(&def);
  }
  std::sort(defs.begin(), defs.end(),
            [](const Definition* a, const Definition* b) {
              return a->name < b->name;
            });
  std::vector<std::string> relative;  // per file, computed once
  relative.reserve(files.size());
  for (const FileIndex& file : files) {
    relative.push_back(fs::path(file.path).lexically_relative(root).string());
  }
  std::string out;
  for (const Definition* def : defs) {
    const auto it = resolution.callers.find(def->name);
    const uint64_t callers = it == resolution.callers.end() ? 0 : it->second;
    out += def->name + "\t" + relative[def->file] + ":" +
           std::to_string(def->line) + "\t" + std::to_string(callers) + "\n";
  }
  for (const auto& [name, count] : resolution.unresolved) {
    out +=
        std::string(name) + "\t(unresolved)\t" + std::to_string(count) + "\n";
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out;
  if (!file)
    throw std::runtime_error(std::string("cannot write ") + path.string());
  SPANPROF_ARG("bytes", out.size());
  return out.size();
}

int RunIndexer(const Options& options, const fs::path& work) {
  spanprof::SetThreadName("main");
  const fs::path root = work / "corpus";
  const std::vector<fs::path> paths = Discover(root);
  const std::vector<FileIndex> files =
      ProcessFiles(paths, options.threads, options.slow_parse);
  uint64_t duplicates = 0;
  const SymbolTable symbols = BuildSymbols(files, &duplicates);
  const Resolution resolution = ResolveCalls(files, symbols);
  const fs::path index_path = work / "index.tsv";
  const uint64_t index_bytes = WriteIndex(index_path, files, root, resolution);

  uint64_t bytes = 0;
  uint64_t tokens = 0;
  for (const FileIndex& file : files) {
    bytes += file.bytes;
    tokens += file.tokens;
  }
  std::printf(
      "indexer: %zu files, %llu bytes, %llu tokens, %zu symbols, %llu calls "
      "(%zu names unresolved)%s\n"
      "indexer: wrote %llu bytes to %s\n",
      files.size(), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(tokens), symbols.size(),
      static_cast<unsigned long long>(resolution.calls),
      resolution.unresolved.size(), options.slow_parse ? " [--slow-parse]" : "",
      static_cast<unsigned long long>(index_bytes), index_path.c_str());
  std::fflush(stdout);
  return duplicates == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) return 2;
  try {
    const WorkDir work(options.work_dir);
    // The program under study starts here; the corpus is its input, so it is
    // generated before (and outside) the profiling session.
    indexer::GenerateCorpus(work.path() / "corpus", options.files);
    return spanprof::ProfileFromEnvironment(
        "indexer.run", [&] { return RunIndexer(options, work.path()); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "indexer_example: %s\n", e.what());
    return 2;
  }
}

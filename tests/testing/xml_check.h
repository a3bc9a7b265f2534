// A small strict XML 1.0 well-formedness checker for the SVG figures, and a
// tree to query them in tests.
//
// It accepts what spanprof writes and what XML allows of it: an optional
// `<?xml ...?>` declaration, comments, elements with quoted attributes, text
// and character/entity references. It rejects what a browser's XML parser
// would reject: unbalanced or mismatched tags, a second root, duplicate
// attributes, unquoted values, a raw '<' or '&' in text or values, unknown
// entities, invalid UTF-8 and characters XML forbids.
//
// Example:
//
//   absl::StatusOr<XmlElement> root = ParseXml(svg);
//   ASSERT_TRUE(root.ok()) << root.status();
//   EXPECT_EQ(root->name, "svg");
//   for (const XmlElement* text : root->FindAll("text")) { ... }
#ifndef SPANPROF_TESTS_TESTING_XML_CHECK_H_
#define SPANPROF_TESTS_TESTING_XML_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof::testing {

// `XmlElement` is one element: its name, attributes (values with references
// resolved), the concatenated text directly inside it (resolved), and its
// child elements in document order.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;
  std::vector<std::unique_ptr<XmlElement>> children;

  std::string Attribute(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
  bool Has(const std::string& key) const {
    return attributes.find(key) != attributes.end();
  }
  // Every descendant (not this element) named `element_name`, in document
  // order.
  std::vector<const XmlElement*> FindAll(std::string_view element_name) const {
    std::vector<const XmlElement*> out;
    Collect(element_name, &out);
    return out;
  }
  // The text of this element and all its descendants, in document order.
  std::string AllText() const {
    std::string out = text;
    for (const auto& child : children) out += child->AllText();
    return out;
  }

 private:
  void Collect(std::string_view element_name,
               std::vector<const XmlElement*>* out) const {
    for (const auto& child : children) {
      if (child->name == element_name) out->push_back(child.get());
      child->Collect(element_name, out);
    }
  }
};

namespace xml_internal {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  absl::StatusOr<XmlElement> Document() {
    if (absl::Status status = CheckCharacters(); !status.ok()) return status;
    if (Starts("<?xml")) {
      const size_t end = s_.find("?>", i_);
      if (end == std::string_view::npos) return Error("unterminated <?xml");
      i_ = end + 2;
    }
    if (absl::Status status = SkipMisc(); !status.ok()) return status;
    if (!Starts("<")) return Error("expected the root element");
    XmlElement root;
    if (absl::Status status = Element(&root, 0); !status.ok()) return status;
    if (absl::Status status = SkipMisc(); !status.ok()) return status;
    if (i_ != s_.size()) return Error("content after the root element");
    return root;
  }

 private:
  absl::Status Error(std::string_view message) const {
    return absl::InvalidArgumentError(std::string(message) + " at byte " +
                                      std::to_string(i_));
  }
  bool Starts(std::string_view prefix) const {
    return s_.substr(i_, prefix.size()) == prefix;
  }
  static bool IsSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
  static bool IsNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == ':' || static_cast<unsigned char>(c) >= 0x80;
  }
  static bool IsNameChar(char c) {
    return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
  }
  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }

  // Valid UTF-8, and only characters XML 1.0 allows.
  absl::Status CheckCharacters() {
    size_t i = 0;
    while (i < s_.size()) {
      const auto b0 = static_cast<unsigned char>(s_[i]);
      uint32_t cp = 0;
      size_t len = 0;
      if (b0 < 0x80) {
        cp = b0;
        len = 1;
      } else if ((b0 & 0xE0) == 0xC0) {
        cp = b0 & 0x1Fu;
        len = 2;
      } else if ((b0 & 0xF0) == 0xE0) {
        cp = b0 & 0x0Fu;
        len = 3;
      } else if ((b0 & 0xF8) == 0xF0) {
        cp = b0 & 0x07u;
        len = 4;
      } else {
        i_ = i;
        return Error("invalid UTF-8 lead byte");
      }
      if (i + len > s_.size()) {
        i_ = i;
        return Error("truncated UTF-8 sequence");
      }
      for (size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s_[i + k]);
        if ((b & 0xC0) != 0x80) {
          i_ = i;
          return Error("invalid UTF-8 continuation byte");
        }
        cp = (cp << 6) | (b & 0x3Fu);
      }
      constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        i_ = i;
        return Error("invalid UTF-8 code point");
      }
      const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD ||
                           (cp >= 0x20 && cp != 0xFFFE && cp != 0xFFFF);
      if (!allowed) {
        i_ = i;
        return Error("character not allowed in XML");
      }
      i += len;
    }
    return absl::OkStatus();
  }

  // Whitespace and comments between top-level items.
  absl::Status SkipMisc() {
    while (true) {
      SkipSpace();
      if (Starts("<!--")) {
        if (absl::Status status = Comment(); !status.ok()) return status;
        continue;
      }
      return absl::OkStatus();
    }
  }

  absl::Status Comment() {
    const size_t end = s_.find("-->", i_ + 4);
    if (end == std::string_view::npos) return Error("unterminated comment");
    if (s_.substr(i_ + 4, end - i_ - 4).find("--") != std::string_view::npos) {
      return Error("'--' inside a comment");
    }
    i_ = end + 3;
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Name() {
    if (i_ >= s_.size() || !IsNameStart(s_[i_]))
      return Error("expected a name");
    const size_t start = i_;
    while (i_ < s_.size() && IsNameChar(s_[i_])) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }

  // Appends the resolved reference at `i_` ('&') to `out`.
  absl::Status Reference(std::string* out) {
    const size_t end = s_.find(';', i_);
    if (end == std::string_view::npos || end - i_ > 12) {
      return Error("unterminated reference");
    }
    const std::string_view ref = s_.substr(i_ + 1, end - i_ - 1);
    static const std::map<std::string_view, char> kEntities = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    if (auto it = kEntities.find(ref); it != kEntities.end()) {
      out->push_back(it->second);
    } else if (ref.size() >= 2 && ref[0] == '#') {
      uint32_t cp = 0;
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return Error("empty character reference");
      for (char c : digits) {
        uint32_t d = 0;
        if (c >= '0' && c <= '9') {
          d = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          return Error("bad character reference");
        }
        cp = cp * (hex ? 16 : 10) + d;
        if (cp > 0x10FFFF) return Error("character reference out of range");
      }
      const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD ||
                           (cp >= 0x20 && cp < 0xD800) ||
                           (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
      if (!allowed) return Error("character reference not allowed in XML");
      out->push_back('?');  // tests only look at ASCII
    } else {
      return Error("unknown entity &" + std::string(ref) + ";");
    }
    i_ = end + 1;
    return absl::OkStatus();
  }

  absl::Status Element(XmlElement* element, int depth) {
    if (depth > 256) return Error("nesting too deep");
    ++i_;  // '<'
    absl::StatusOr<std::string> name = Name();
    if (!name.ok()) return name.status();
    element->name = *name;
    while (true) {
      const size_t before = i_;
      SkipSpace();
      if (i_ >= s_.size()) return Error("unterminated start tag");
      if (Starts("/>")) {
        i_ += 2;
        return absl::OkStatus();
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (i_ == before) return Error("expected whitespace before attribute");
      absl::StatusOr<std::string> key = Name();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=') return Error("expected '='");
      ++i_;
      SkipSpace();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) {
        return Error("attribute value not quoted");
      }
      const char quote = s_[i_++];
      std::string value;
      while (true) {
        if (i_ >= s_.size()) return Error("unterminated attribute value");
        const char c = s_[i_];
        if (c == quote) {
          ++i_;
          break;
        }
        if (c == '<') return Error("'<' in an attribute value");
        if (c == '&') {
          if (absl::Status status = Reference(&value); !status.ok()) {
            return status;
          }
          continue;
        }
        value.push_back(c);
        ++i_;
      }
      if (!element->attributes.emplace(*key, value).second) {
        return Error("duplicate attribute " + *key);
      }
    }
    // Content.
    while (true) {
      if (i_ >= s_.size()) return Error("unterminated element " + *name);
      if (Starts("</")) {
        i_ += 2;
        absl::StatusOr<std::string> end = Name();
        if (!end.ok()) return end.status();
        if (*end != *name) {
          return Error("</" + *end + "> closes <" + *name + ">");
        }
        SkipSpace();
        if (i_ >= s_.size() || s_[i_] != '>') return Error("expected '>'");
        ++i_;
        return absl::OkStatus();
      }
      if (Starts("<!--")) {
        if (absl::Status status = Comment(); !status.ok()) return status;
        continue;
      }
      if (Starts("<![CDATA[")) {
        const size_t end = s_.find("]]>", i_);
        if (end == std::string_view::npos) return Error("unterminated CDATA");
        element->text.append(s_.substr(i_ + 9, end - i_ - 9));
        i_ = end + 3;
        continue;
      }
      if (Starts("<?") || Starts("<!")) return Error("unexpected markup");
      if (s_[i_] == '<') {
        auto child = std::make_unique<XmlElement>();
        if (absl::Status status = Element(child.get(), depth + 1);
            !status.ok()) {
          return status;
        }
        element->children.push_back(std::move(child));
        continue;
      }
      if (s_[i_] == '&') {
        if (absl::Status status = Reference(&element->text); !status.ok()) {
          return status;
        }
        continue;
      }
      if (Starts("]]>")) return Error("']]>' in text");
      element->text.push_back(s_[i_]);
      ++i_;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace xml_internal

// `ParseXml()` checks that `text` is a well-formed XML document and returns
// its root element; the error says what is wrong and at which byte.
inline absl::StatusOr<XmlElement> ParseXml(std::string_view text) {
  return xml_internal::Parser(text).Document();
}

// The text of the figure at `path`, with a test failure unless it is a
// well-formed XML document whose root element is <svg>.
inline std::string ReadSvg(const std::string& path) {
  const std::string svg = ReadText(path);
  absl::StatusOr<XmlElement> root = ParseXml(svg);
  EXPECT_TRUE(root.ok()) << path << ": " << root.status();
  if (root.ok()) EXPECT_EQ(root->name, "svg");
  return svg;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_XML_CHECK_H_

#include "common/node_constraint.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/text.h"

namespace gantry {

struct NodeConstraint::Term {
  enum class Kind { kFeature, kAll, kAny, kMatchingAny };
  Kind kind = Kind::kFeature;
  std::string feature;                             // kFeature
  std::vector<std::shared_ptr<const Term>> parts;  // kAll, kAny
  std::vector<std::string> choices;                // kMatchingAny
};

namespace {

using Term = NodeConstraint::Term;
using TermPtr = std::shared_ptr<const Term>;

// Deeper nesting than any real constraint: bounds the recursion on hostile
// input.
constexpr int kMaxDepth = 16;
constexpr std::size_t kMaxLength = 1024;

std::string Char(char c) { return std::string(1, c); }

bool IsFeatureChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-' || c == ':';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<TermPtr> ParseAll() {
    absl::StatusOr<TermPtr> root = ParseAny(0);
    if (!root.ok()) return root;
    if (pos_ != text_.size())
      return Error(absl::StrCat("unexpected '", Char(text_[pos_]), "'"));
    return root;
  }

  std::size_t matching_groups() const { return matching_groups_; }
  std::size_t choices() const { return choices_; }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("--constraint=", std::string(text_), ": ", what,
                     " at position ", pos_ + 1));
  }

  bool Take(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // any := all ('|' all)*
  absl::StatusOr<TermPtr> ParseAny(int depth) {
    return ParseJoined(depth, '|', Term::Kind::kAny, &Parser::ParseAllOf);
  }

  // all := factor ('&' factor)*
  absl::StatusOr<TermPtr> ParseAllOf(int depth) {
    return ParseJoined(depth, '&', Term::Kind::kAll, &Parser::ParseFactor);
  }

  absl::StatusOr<TermPtr> ParseJoined(
      int depth, char joiner, Term::Kind kind,
      absl::StatusOr<TermPtr> (Parser::*part)(int)) {
    absl::StatusOr<TermPtr> first = (this->*part)(depth);
    if (!first.ok()) return first;
    if (pos_ >= text_.size() || text_[pos_] != joiner) return first;
    auto joined = std::make_shared<Term>();
    joined->kind = kind;
    joined->parts.push_back(*std::move(first));
    while (Take(joiner)) {
      absl::StatusOr<TermPtr> next = (this->*part)(depth);
      if (!next.ok()) return next;
      joined->parts.push_back(*std::move(next));
    }
    return TermPtr(std::move(joined));
  }

  // factor := feature | '(' any ')' | '[' feature ('|' feature)* ']'
  absl::StatusOr<TermPtr> ParseFactor(int depth) {
    if (depth >= kMaxDepth) return Error("nested too deeply");
    if (Take('(')) {
      absl::StatusOr<TermPtr> inner = ParseAny(depth + 1);
      if (!inner.ok()) return inner;
      if (!Take(')')) return Error("missing ')'");
      return inner;
    }
    if (Take('[')) return ParseMatchingAny();
    absl::StatusOr<std::string> feature = ParseFeature();
    if (!feature.ok()) return feature.status();
    auto term = std::make_shared<Term>();
    term->feature = *std::move(feature);
    return TermPtr(std::move(term));
  }

  absl::StatusOr<TermPtr> ParseMatchingAny() {
    if (++matching_groups_ > 1) {
      return Error("only one [a|b] matching group is supported");
    }
    auto term = std::make_shared<Term>();
    term->kind = Term::Kind::kMatchingAny;
    do {
      absl::StatusOr<std::string> feature = ParseFeature();
      if (!feature.ok()) return feature.status();
      term->choices.push_back(*std::move(feature));
    } while (Take('|'));
    if (!Take(']')) {
      return Error(
          "a [...] group holds features joined by '|' and ends "
          "with ']'");
    }
    choices_ = term->choices.size();
    return TermPtr(std::move(term));
  }

  absl::StatusOr<std::string> ParseFeature() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && IsFeatureChar(text_[pos_])) ++pos_;
    if (pos_ == start) {
      if (pos_ == text_.size()) return Error("a feature name is missing");
      return Error(absl::StrCat("a feature name is expected, not '",
                                Char(text_[pos_]), "'"));
    }
    if (pos_ < text_.size() && text_[pos_] == '*') {
      return Error("feature counts (name*N) are not supported");
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t matching_groups_ = 0;
  std::size_t choices_ = 1;
};

bool Has(const std::vector<std::string>& features, const std::string& name) {
  return std::find(features.begin(), features.end(), name) != features.end();
}

bool Evaluate(const Term& term, const std::vector<std::string>& features,
              std::size_t choice) {
  switch (term.kind) {
    case Term::Kind::kFeature:
      return Has(features, term.feature);
    case Term::Kind::kMatchingAny:
      return choice < term.choices.size() &&
             Has(features, term.choices[choice]);
    case Term::Kind::kAll:
      return std::all_of(term.parts.begin(), term.parts.end(),
                         [&](const TermPtr& part) {
                           return Evaluate(*part, features, choice);
                         });
    case Term::Kind::kAny:
      return std::any_of(term.parts.begin(), term.parts.end(),
                         [&](const TermPtr& part) {
                           return Evaluate(*part, features, choice);
                         });
  }
  return false;
}

}  // namespace

absl::StatusOr<NodeConstraint> NodeConstraint::Parse(std::string_view text) {
  std::string compact;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact.push_back(c);
  }
  if (compact.empty()) {
    return absl::InvalidArgumentError("--constraint: the expression is empty");
  }
  if (compact.size() > kMaxLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("--constraint: longer than ", kMaxLength, " characters"));
  }
  Parser parser(compact);
  absl::StatusOr<TermPtr> root = parser.ParseAll();
  if (!root.ok()) return root.status();
  NodeConstraint constraint;
  constraint.root_ = *std::move(root);
  constraint.choices_ = parser.choices();
  constraint.text_ = std::move(compact);
  return constraint;
}

bool NodeConstraint::Matches(const std::vector<std::string>& features,
                             std::size_t choice) const {
  return root_ != nullptr && Evaluate(*root_, features, choice);
}

absl::StatusOr<std::vector<std::string>> ParseFeatureList(
    std::string_view text) {
  std::vector<std::string> features;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = Trim(text.substr(start, end - start));
    if (!word.empty()) {
      if (!std::all_of(word.begin(), word.end(), IsFeatureChar)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "feature '", std::string(word),
            "': use letters, digits and _ . - : (features are separated "
            "by ',')"));
      }
      if (std::find(features.begin(), features.end(), word) == features.end()) {
        features.emplace_back(word);
      }
    }
    start = end + 1;
  }
  return features;
}

}  // namespace gantry

#include "common/gpu_type.h"

#include <array>
#include <cstdio>
#include <vector>

#include "absl/strings/ascii.h"

namespace gantry {
namespace {

constexpr std::string_view kUnnamedPrefix = "pci ";

// Words that say who made a GPU or which product line it belongs to, never
// which model it is.
constexpr std::array<std::string_view, 22> kFamilyWords = {
    "nvidia", "amd",      "ati",         "intel",       "tesla", "instinct",
    "radeon", "pro",      "geforce",     "quadro",      "data",  "center",
    "gpu",    "graphics", "accelerator", "corporation", "inc",   "advanced",
    "micro",  "devices",  "series",      "datacenter"};

bool IsFamilyWord(std::string_view word) {
  for (std::string_view family : kFamilyWords) {
    if (word == family) return true;
  }
  return false;
}

bool IsAlnum(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c));
}

// absl's string_view is not std's in Debian's abseil.
std::string Lower(std::string_view text) {
  std::string lower(text);
  absl::AsciiStrToLower(&lower);
  return lower;
}

bool HasDigit(std::string_view word) {
  for (char c : word) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

bool AllDigits(std::string_view word) {
  for (char c : word) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !word.empty();
}

bool AllLetters(std::string_view word) {
  for (char c : word) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) return false;
  }
  return !word.empty();
}

// "80gb", "16g", "512mb": how much memory, not which model.
bool IsMemorySize(std::string_view word) {
  size_t digits = 0;
  while (digits < word.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(word[digits]))) {
    ++digits;
  }
  if (digits == 0) return false;
  const std::string_view unit = word.substr(digits);
  return unit == "g" || unit == "gb" || unit == "m" || unit == "mb" ||
         unit == "t" || unit == "tb";
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsAlnum(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && IsAlnum(text[i])) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// The type named by lower-case text, "" when it names none.
std::string TypeFromWords(std::string_view text) {
  const std::vector<std::string_view> words = Words(text);
  std::string_view previous;  // the word before, unless a family word
  std::string_view last;
  for (std::string_view word : words) {
    if (IsFamilyWord(word)) {
      previous = {};
      continue;
    }
    if (HasDigit(word) && !IsMemorySize(word)) {
      if (AllDigits(word) && AllLetters(previous)) {
        return std::string(previous) + std::string(word);
      }
      return std::string(word);
    }
    previous = word;
    if (!IsMemorySize(word)) last = word;
  }
  return std::string(last);
}

}  // namespace

std::string UnnamedGpuModel(unsigned vendor_id, unsigned device_id) {
  char text[24];
  std::snprintf(text, sizeof(text), "PCI %04x:%04x", vendor_id & 0xffff,
                device_id & 0xffff);
  return text;
}

bool IsUnnamedGpuModel(std::string_view model) {
  if (model.size() != kUnnamedPrefix.size() + 9 ||
      Lower(model.substr(0, kUnnamedPrefix.size())) != kUnnamedPrefix) {
    return false;
  }
  const std::string_view ids = model.substr(kUnnamedPrefix.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const bool ok =
        i == 4 ? ids[i] == ':'
               : absl::ascii_isxdigit(static_cast<unsigned char>(ids[i]));
    if (!ok) return false;
  }
  return true;
}

std::string GpuTypeOf(std::string_view model) {
  if (model.empty() || IsUnnamedGpuModel(model)) return "";
  const std::string lower = Lower(model);
  // pci.ids: "CHIP [Marketing Name]"; the chip ("GA100") is no type.
  const size_t open = lower.rfind('[');
  if (open != std::string::npos) {
    const size_t close = lower.find(']', open);
    const std::string type = TypeFromWords(std::string_view(lower).substr(
        open + 1,
        close == std::string::npos ? std::string::npos : close - open - 1));
    if (!type.empty()) return type;
  }
  return TypeFromWords(lower);
}

bool TypeIsWordsOfModel(std::string_view lower_model,
                        std::string_view lower_type) {
  if (lower_type.empty()) return false;
  for (size_t at = lower_model.find(lower_type); at != std::string_view::npos;
       at = lower_model.find(lower_type, at + 1)) {
    const size_t end = at + lower_type.size();
    if ((at == 0 || !IsAlnum(lower_model[at - 1])) &&
        (end == lower_model.size() || !IsAlnum(lower_model[end]))) {
      return true;
    }
  }
  return false;
}

bool GpuModelHasType(std::string_view model, std::string_view type) {
  if (type.empty()) return false;
  const std::string lower_type = Lower(type);
  return GpuTypeOf(model) == lower_type ||
         TypeIsWordsOfModel(Lower(model), lower_type);
}

}  // namespace gantry

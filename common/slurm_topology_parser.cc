// Slurm topology.conf (tree format) reader (see slurm_topology_parser.h).

#include "common/slurm_topology_parser.h"

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "common/text.h"
#include "common/text_file.h"

namespace gantry {
namespace {

// Slurm refuses longer switch names (HOST_NAME_MAX).
constexpr size_t kMaxSwitchName = 64;
// Slurm's own limit on one hostlist range (MAX_RANGE in hostlist.c): far
// above any real switch, low enough that a typo such as node[1-99999999]
// cannot exhaust memory.
constexpr size_t kMaxHostsPerList = 64 * 1024;

struct LogicalLine {
  std::string text;
  int line = 0;  // first physical line
};

// Text before an unescaped '#'; "\#" stands for a literal '#'.
std::string StripComment(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      out += '#';
      ++i;
    } else if (line[i] == '#') {
      break;
    } else {
      out += line[i];
    }
  }
  return out;
}

absl::StatusOr<std::vector<LogicalLine>> SplitLines(std::string_view text,
                                                    const std::string& source) {
  std::vector<LogicalLine> lines;
  std::optional<LogicalLine> pending;  // a line continued with '\'
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string body = StripComment(raw);
    const absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(body);
    const bool continued = !trimmed.empty() && trimmed.back() == '\\';
    if (continued) body.resize(trimmed.size() - 1);
    if (!pending.has_value()) pending = LogicalLine{"", number};
    pending->text += body;
    if (!continued) {
      if (!absl::StripAsciiWhitespace(pending->text).empty()) {
        lines.push_back(std::move(*pending));
      }
      pending.reset();
    }
  }
  if (pending.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(SourceLine(source, pending->line),
                     "the last line ends with '\\' but the file ends there"));
  }
  return lines;
}

struct Word {
  std::string key;  // as written
  std::string value;
};

// Key=Value words separated by blanks; a value may be "quoted".
absl::StatusOr<std::vector<Word>> SplitWords(const std::string& text,
                                             const std::string& where) {
  std::vector<Word> words;
  size_t i = 0;
  while (true) {
    while (i < text.size() && absl::ascii_isspace(text[i])) ++i;
    if (i >= text.size()) break;
    const size_t start = i;
    while (i < text.size() && !absl::ascii_isspace(text[i]) && text[i] != '=' &&
           text[i] != '"') {
      ++i;
    }
    if (i >= text.size() || text[i] != '=' || i == start) {
      size_t end = start;
      while (end < text.size() && !absl::ascii_isspace(text[end])) ++end;
      return absl::InvalidArgumentError(
          absl::StrCat(where, "expected Key=Value, found \"",
                       text.substr(start, end - start), "\""));
    }
    Word word;
    word.key = text.substr(start, i - start);
    ++i;  // '='
    if (i < text.size() && text[i] == '"') {
      const size_t close = text.find('"', i + 1);
      if (close == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "unterminated quote in the value of ", word.key));
      }
      word.value = text.substr(i + 1, close - i - 1);
      i = close + 1;
      if (i < text.size() && !absl::ascii_isspace(text[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "text right after the closing quote of ", word.key));
      }
    } else {
      const size_t start_value = i;
      while (i < text.size() && !absl::ascii_isspace(text[i])) ++i;
      word.value = text.substr(start_value, i - start_value);
    }
    words.push_back(std::move(word));
  }
  return words;
}

bool LooksLikeYaml(const std::vector<LogicalLine>& lines) {
  if (lines.empty()) return false;
  const absl::string_view first = absl::StripAsciiWhitespace(lines[0].text);
  return first == "---" || absl::StartsWith(first, "- topology:") ||
         absl::StartsWith(first, "- ");
}

absl::Status ParseSwitchLine(const std::vector<Word>& words,
                             const std::string& where, int line,
                             TopologySpec* spec) {
  TopologySpec::Switch sw;
  sw.name = words[0].value;
  sw.line = line;
  if (sw.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "empty SwitchName"));
  }
  if (sw.name.size() > kMaxSwitchName) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "SwitchName ", sw.name, " is longer than ",
                     kMaxSwitchName, " characters"));
  }
  std::optional<std::string> switches;
  std::optional<std::string> nodes;
  std::optional<std::string> link_speed;
  for (size_t i = 1; i < words.size(); ++i) {
    const Word& w = words[i];
    const std::string key = absl::AsciiStrToLower(w.key);
    std::optional<std::string>* slot = nullptr;
    if (key == "switches") {
      slot = &switches;
    } else if (key == "nodes") {
      slot = &nodes;
    } else if (key == "linkspeed") {
      slot = &link_speed;
    } else if (key == "switchname") {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "a second SwitchName on one line (one switch per line)"));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "unknown keyword ", w.key, " for switch ",
                       sw.name, " (expected Switches, Nodes or LinkSpeed)"));
    }
    if (slot->has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, w.key, " is given twice for switch ", sw.name));
    }
    *slot = w.value;
  }
  if (link_speed.has_value()) {
    const std::string& text = *link_speed;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), sw.link_speed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "LinkSpeed=", text, " of switch ", sw.name,
                       " is not an unsigned integer"));
    }
  }
  if (switches.has_value() && nodes.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "switch ", sw.name, " has both child switches and nodes"));
  }
  if (!switches.has_value() && !nodes.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "switch ", sw.name, " has neither child switches nor nodes"));
  }
  const std::string& list = switches.has_value() ? *switches : *nodes;
  const char* key = switches.has_value() ? "Switches" : "Nodes";
  if (list.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, key, "= of switch ", sw.name, " is empty"));
  }
  absl::StatusOr<std::vector<std::string>> names =
      ExpandHostlist(list, kMaxHostsPerList);
  if (!names.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, key, "=", list,
                                                   " of switch ", sw.name, ": ",
                                                   names.status().message()));
  }
  for (std::string& name : *names) {
    if (switches.has_value()) {
      spec->links.push_back({sw.name, std::move(name), 1, line});
    } else {
      spec->attachments.push_back({std::move(name), sw.name, line});
    }
  }
  spec->switches.push_back(std::move(sw));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Topology> ParseSlurmTopology(std::string_view text,
                                            const std::string& source) {
  absl::StatusOr<std::vector<LogicalLine>> lines = SplitLines(text, source);
  if (!lines.ok()) return lines.status();
  if (LooksLikeYaml(*lines)) {
    return absl::UnimplementedError(absl::StrCat(
        SourceLine(source, (*lines)[0].line),
        "this looks like topology.yaml, which is not supported yet; write "
        "the tree in topology.conf form (SwitchName=... Switches=... "
        "Nodes=...)"));
  }

  TopologySpec spec;
  spec.source = source;
  spec.link_kind = TopologySpec::LinkKind::kParentChild;
  spec.allow_multi_homed_nodes = false;
  for (const LogicalLine& line : *lines) {
    const std::string where = SourceLine(source, line.line);
    absl::StatusOr<std::vector<Word>> words = SplitWords(line.text, where);
    if (!words.ok()) return words.status();
    const std::string first = absl::AsciiStrToLower((*words)[0].key);
    if (first == "blockname" || first == "blocksizes") {
      return absl::UnimplementedError(absl::StrCat(
          where, (*words)[0].key,
          "=: the block topology format is not supported yet (only the "
          "tree format: SwitchName=...)"));
    }
    if (first != "switchname") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "unknown keyword ", (*words)[0].key,
                       " (a line starts with SwitchName=)"));
    }
    absl::Status status = ParseSwitchLine(*words, where, line.line, &spec);
    if (!status.ok()) return status;
  }
  return Topology::Build(std::move(spec));
}

absl::StatusOr<Topology> LoadSlurmTopologyFile(const std::string& path) {
  absl::Status usable =
      CheckNotDirectory(path, "topology file", "a topology file");
  if (!usable.ok()) return usable;
  const std::string extension = std::filesystem::path(path).extension();
  if (extension == ".yaml" || extension == ".yml") {
    return absl::UnimplementedError(absl::StrCat(
        path,
        ": topology.yaml is not supported yet; write the tree in "
        "topology.conf form (SwitchName=... Switches=... Nodes=...)"));
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseSlurmTopology(*text, path);
}

}  // namespace gantry

// ibnetdiscover output and ibsim net files (see ibnetdiscover_parser.h).

#include "common/ibnetdiscover_parser.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "common/text_file.h"

namespace gantry {
namespace {

// Port numbers are 8 bits wide in InfiniBand.
constexpr uint32_t kMaxPorts = 255;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads one line's fields left to right.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  std::string_view Rest() const { return text_.substr(pos_); }
  void SkipBlanks() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Take(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  std::optional<uint32_t> Number() {
    uint64_t value = 0;
    const size_t start = pos_;
    while (!AtEnd() && absl::ascii_isdigit(text_[pos_])) {
      value = value * 10 + static_cast<uint64_t>(text_[pos_] - '0');
      if (value > 0xFFFFFFFFu) return std::nullopt;
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return static_cast<uint32_t>(value);
  }
  // "text" -> text; nullopt without a closing quote.
  std::optional<std::string> Quoted() {
    if (!Take('"')) return std::nullopt;
    const size_t close = text_.find('"', pos_);
    if (close == std::string_view::npos) return std::nullopt;
    std::string value(text_.substr(pos_, close - pos_));
    pos_ = close + 1;
    return value;
  }
  // "(hex)" -> the text inside; nullopt when there is no '(' here.
  std::optional<std::string_view> Parenthesised() {
    if (Peek() != '(') return std::nullopt;
    const size_t close = text_.find(')', pos_);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view inside = text_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return inside;
  }
  std::string_view Word() {
    const size_t start = pos_;
    while (!AtEnd() && text_[pos_] != ' ' && text_[pos_] != '\t') ++pos_;
    return text_.substr(start, pos_ - start);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// The last "<width>x<speed>" word of a comment ("4xNDR", "4xSDR").
std::string WidthSpeedIn(std::string_view comment) {
  std::string found;
  Cursor c(comment);
  while (true) {
    c.SkipBlanks();
    if (c.AtEnd()) break;
    const std::string_view word = c.Word();
    const size_t x = word.find('x');
    if (x == 0 || x == std::string_view::npos || x + 1 >= word.size()) continue;
    const bool digits = IsDigits(word.substr(0, x));
    bool speed = true;
    for (size_t i = x + 1; i < word.size(); ++i) {
      speed &= absl::ascii_isalnum(word[i]);
    }
    if (digits && speed) found = std::string(word);
  }
  return found;
}

// The first quoted text of a "# ..." comment: the node description.
std::optional<std::string> DescriptionIn(std::string_view rest) {
  Cursor c(rest);
  c.SkipBlanks();
  if (!c.Take('#')) return std::nullopt;
  c.SkipBlanks();
  return c.Quoted();
}

struct Pending {  // key=value lines seen before a node header
  uint64_t guid = 0;
  uint64_t system_image_guid = 0;
};

std::optional<FabricNode::Type> TypeOf(std::string_view word) {
  if (word == "Switch") return FabricNode::Type::kSwitch;
  if (word == "Ca" || word == "Hca") return FabricNode::Type::kCa;
  if (word == "Rt" || word == "Router") return FabricNode::Type::kRouter;
  return std::nullopt;
}

// "S-2c5eab0300b87b40" -> the GUID; 0 when the id has no such form.
uint64_t GuidFromId(std::string_view id) {
  if (id.size() != 18 || id[1] != '-') return 0;
  absl::StatusOr<uint64_t> guid = ParseGuid(id.substr(2));
  return guid.ok() ? *guid : 0;
}

absl::Status ParseHeader(std::string_view text, const std::string& where,
                         int line, FabricNode* node) {
  Cursor c(text);
  const std::optional<FabricNode::Type> type = TypeOf(c.Word());
  c.SkipBlanks();
  const std::optional<uint32_t> ports = c.Number();
  c.SkipBlanks();
  std::optional<std::string> id = c.Quoted();
  if (!type.has_value() || !ports.has_value() || !id.has_value() ||
      id->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "malformed node header (expected: Switch|Ca <ports> \"<id>\")"));
  }
  if (*ports == 0 || *ports > kMaxPorts) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "node ", *id, " claims ", *ports, " ports (1 to ",
                     kMaxPorts, " expected)"));
  }
  node->type = *type;
  node->port_count = *ports;
  node->id = std::move(*id);
  node->line = line;
  std::optional<std::string> description = DescriptionIn(c.Rest());
  node->description = description.has_value() ? *description : node->id;
  return absl::OkStatus();
}

absl::Status ParsePort(std::string_view text, const std::string& where,
                       int line, FabricNode* node) {
  Cursor c(text);
  FabricPort port;
  port.line = line;
  const auto malformed = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "malformed port line of ", node->id, ": ", std::string(what)));
  };
  c.Take('[');
  const std::optional<uint32_t> number = c.Number();
  if (!number.has_value() || !c.Take(']')) {
    return malformed("expected [<port>]");
  }
  port.port = *number;
  if (std::optional<std::string_view> guid = c.Parenthesised()) {
    absl::StatusOr<uint64_t> parsed = ParseGuid(*guid);
    if (!parsed.ok()) {
      return malformed(absl::StrCat("port GUID: ", parsed.status().message()));
    }
    port.port_guid = *parsed;
  }
  c.SkipBlanks();
  std::optional<std::string> remote = c.Quoted();
  if (!remote.has_value() || remote->empty()) {
    return malformed("expected the \"<id>\" of the other end");
  }
  port.remote_id = std::move(*remote);
  std::optional<uint32_t> remote_port;
  if (c.Take('[')) remote_port = c.Number();
  if (!remote_port.has_value() || !c.Take(']')) {
    return malformed("expected [<port>] after the other end's id");
  }
  port.remote_port = *remote_port;
  if (std::optional<std::string_view> guid = c.Parenthesised()) {
    if (!ParseGuid(*guid).ok()) return malformed("the other end's port GUID");
  }
  const std::string_view rest = c.Rest();
  const size_t hash = rest.find('#');
  if (hash != std::string_view::npos) {
    port.width_speed = WidthSpeedIn(rest.substr(hash + 1));
  }

  if (port.port == 0 || port.port > node->port_count) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "port ", port.port, " of ", node->id,
                     " (which has ", node->port_count, " ports)"));
  }
  if (port.remote_port == 0 || port.remote_port > kMaxPorts) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "port ", port.port, " of ", node->id, " is cabled to port ",
        port.remote_port, " of ", port.remote_id, ", which cannot exist"));
  }
  for (const FabricPort& other : node->ports) {
    if (other.port == port.port) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "port ", port.port, " of ", node->id,
                       " is listed twice (also on line ", other.line, ")"));
    }
  }
  node->ports.push_back(std::move(port));
  return absl::OkStatus();
}

absl::Status ParseKeyValue(std::string_view text, const std::string& where,
                           Pending* pending) {
  const size_t eq = text.find('=');
  const std::string_view key = text.substr(0, eq);
  std::string_view value = text.substr(eq + 1);
  uint64_t* slot = nullptr;
  if (key == "switchguid" || key == "caguid" || key == "rtguid") {
    slot = &pending->guid;
    value = value.substr(0, value.find('('));
  } else if (key == "sysimgguid") {
    slot = &pending->system_image_guid;
  } else {
    return absl::OkStatus();  // vendid, devid, ...: not needed
  }
  absl::StatusOr<uint64_t> guid = ParseGuid(Trim(value));
  if (!guid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, std::string(key), ": ", guid.status().message()));
  }
  *slot = *guid;
  return absl::OkStatus();
}

bool IsKeyValue(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == 0 || eq == std::string_view::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    if (!absl::ascii_isalnum(text[i]) && text[i] != '_') return false;
  }
  return true;
}

// Each cable must lead to a node the file describes, and where the other
// end lists the port, back to this one.
absl::Status CheckCables(const Fabric& fabric) {
  std::map<std::string_view, const FabricNode*> by_id;
  for (const FabricNode& node : fabric.nodes) by_id[node.id] = &node;
  for (const FabricNode& node : fabric.nodes) {
    for (const FabricPort& port : node.ports) {
      auto it = by_id.find(port.remote_id);
      if (it == by_id.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            SourceLine(fabric.source, port.line), "port ", port.port, " of ",
            node.id, " is cabled to ", port.remote_id,
            ", which the file does not describe (truncated output?)"));
      }
      const FabricNode& remote = *it->second;
      if (port.remote_port > remote.port_count) {
        return absl::InvalidArgumentError(absl::StrCat(
            SourceLine(fabric.source, port.line), "port ", port.port, " of ",
            node.id, " is cabled to port ", port.remote_port, " of ", remote.id,
            ", which has ", remote.port_count, " ports"));
      }
      for (const FabricPort& back : remote.ports) {
        if (back.port != port.remote_port) continue;
        if (back.remote_id != node.id || back.remote_port != port.port) {
          return absl::InvalidArgumentError(absl::StrCat(
              SourceLine(fabric.source, port.line), "port ", port.port, " of ",
              node.id, " is cabled to ", remote.id, " port ", port.remote_port,
              ", but line ", back.line, " cables that port to ", back.remote_id,
              " port ", back.remote_port));
        }
      }
    }
  }
  return absl::OkStatus();
}

// GUIDs identify nodes and ports in a subnet: two nodes (or two adapter
// ports) with one GUID mean a corrupt dump, and would make matching agents
// ambiguous.
absl::Status CheckGuids(const Fabric& fabric) {
  std::map<uint64_t, int> node_line;
  std::map<uint64_t, int> port_line;
  for (const FabricNode& node : fabric.nodes) {
    if (node.guid != 0) {
      auto [it, inserted] = node_line.emplace(node.guid, node.line);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            SourceLine(fabric.source, node.line), "node GUID ",
            FormatGuid(node.guid), " of ", node.id,
            " is also the node GUID of the node on line ", it->second));
      }
    }
    for (const FabricPort& port : node.ports) {
      if (port.port_guid == 0) continue;
      auto [it, inserted] = port_line.emplace(port.port_guid, port.line);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            SourceLine(fabric.source, port.line), "port GUID ",
            FormatGuid(port.port_guid), " is also given on line ", it->second));
      }
    }
  }
  return absl::OkStatus();
}

bool IsDefaultDescriptionWord(std::string_view word) {
  // "MT4129": the firmware's device id, written when nobody set the name.
  return word.size() >= 3 && word.substr(0, 2) == "MT" &&
         IsDigits(word.substr(2));
}

}  // namespace

absl::StatusOr<uint64_t> ParseGuid(std::string_view text) {
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  uint64_t value = 0;
  int count = 0;
  for (char c : digits) {
    if (c == ':') continue;
    const int d = HexDigit(c);
    if (d < 0 || ++count > 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a GUID: \"", std::string(text), "\""));
    }
    value = (value << 4) | static_cast<uint64_t>(d);
  }
  if (count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a GUID: \"", std::string(text), "\""));
  }
  return value;
}

std::string FormatGuid(uint64_t guid) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx",
                static_cast<unsigned long long>(guid));
  return text;
}

absl::StatusOr<Fabric> ParseIbnetdiscover(std::string_view text,
                                          const std::string& source) {
  Fabric fabric;
  fabric.source = source;
  std::map<std::string, int, std::less<>> line_of_id;
  Pending pending;
  FabricNode* current = nullptr;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++number;
    const std::string where = SourceLine(source, number);
    if (line.empty()) {
      current = nullptr;  // a blank line ends a node's record
      continue;
    }
    if (line[0] == '#') continue;
    absl::Status status;
    if (line[0] == '[') {
      if (current == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            where,
            "a port line outside a node (a Switch or Ca header line "
            "must come first)"));
      }
      status = ParsePort(line, where, number, current);
    } else if (TypeOf(Cursor(line).Word()).has_value()) {
      FabricNode node;
      status = ParseHeader(line, where, number, &node);
      if (!status.ok()) return status;
      auto [it, inserted] = line_of_id.emplace(node.id, number);
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "node ", node.id,
                         " is described twice (first "
                         "on line ",
                         it->second, ")"));
      }
      node.guid = pending.guid != 0 ? pending.guid : GuidFromId(node.id);
      node.system_image_guid = pending.system_image_guid;
      pending = Pending();
      fabric.nodes.push_back(std::move(node));
      current = &fabric.nodes.back();
    } else if (IsKeyValue(line)) {
      status = ParseKeyValue(line, where, &pending);
    } else {
      const std::string shown(line.substr(0, 60));
      return absl::InvalidArgumentError(absl::StrCat(
          where, "not ibnetdiscover output: \"", shown,
          line.size() > 60 ? "...\"" : "\"",
          " (expected a Switch/Ca header, a [port] line, key=value or a "
          "# comment)"));
    }
    if (!status.ok()) return status;
  }
  absl::Status cables = CheckCables(fabric);
  if (!cables.ok()) return cables;
  absl::Status guids = CheckGuids(fabric);
  if (!guids.ok()) return guids;
  return fabric;
}

absl::StatusOr<Fabric> LoadIbnetdiscoverFile(const std::string& path) {
  absl::Status usable =
      CheckNotDirectory(path, "ibnetdiscover file", "ibnetdiscover output");
  if (!usable.ok()) return usable;
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseIbnetdiscover(*text, path);
}

std::string HostFromNodeDescription(std::string_view description) {
  if (Contains(description, "Mellanox Technologies")) {
    return "";
  }
  Cursor c(description);
  c.SkipBlanks();
  const std::string_view first = c.Word();
  if (IsDefaultDescriptionWord(first)) return "";
  return std::string(first);
}

std::string SwitchNameFromNodeDescription(std::string_view description) {
  std::string_view name = Trim(description);
  if (name.substr(0, 4) == "MF0;") {
    name.remove_prefix(4);
    name = name.substr(0, name.find(':'));
  }
  return std::string(name);
}

absl::StatusOr<FabricTopology> BuildFabricTopology(
    const Fabric& fabric, const std::vector<AgentHcas>& agents) {
  std::map<std::string_view, const FabricNode*> by_id;
  std::vector<const FabricNode*> switches;
  for (const FabricNode& node : fabric.nodes) {
    by_id[node.id] = &node;
    if (node.type != FabricNode::Type::kCa) switches.push_back(&node);
  }
  const auto is_switch = [&](std::string_view id) {
    auto it = by_id.find(id);
    return it != by_id.end() && it->second->type != FabricNode::Type::kCa;
  };

  // Agents by GUID and by name.
  std::map<uint64_t, size_t> agent_of_guid;
  std::map<std::string_view, size_t> agent_of_name;
  for (size_t i = 0; i < agents.size(); ++i) {
    agent_of_name.emplace(agents[i].node, i);
    for (uint64_t guid : agents[i].guids) {
      auto [it, inserted] = agent_of_guid.emplace(guid, i);
      if (!inserted && it->second != i) {
        return absl::InvalidArgumentError(
            absl::StrCat(fabric.source, ": GUID ", FormatGuid(guid),
                         " is reported by two agents, ",
                         agents[it->second].node, " and ", agents[i].node));
      }
    }
  }

  // Switch names: the description's, unless empty or shared.
  std::map<std::string, int> name_uses;
  for (const FabricNode* s : switches) {
    ++name_uses[SwitchNameFromNodeDescription(s->description)];
  }
  std::map<std::string_view, std::string> switch_name;
  TopologySpec spec;
  spec.source = fabric.source;
  spec.link_kind = TopologySpec::LinkKind::kUndirected;
  spec.allow_multi_homed_nodes = true;
  for (const FabricNode* s : switches) {
    std::string name = SwitchNameFromNodeDescription(s->description);
    if (name.empty() || name_uses[name] > 1) name = s->id;
    switch_name[s->id] = name;
    TopologySpec::Switch sw;
    sw.name = name;
    sw.description = s->description;
    sw.line = s->line;
    spec.switches.push_back(std::move(sw));
  }

  FabricTopology result;
  std::vector<bool> agent_matched(agents.size(), false);
  std::vector<std::string> host_cas;  // names of adapters, attached or not
  std::set<std::string> attached;
  std::map<uint64_t, std::string> port_guids;
  for (const FabricNode& node : fabric.nodes) {
    if (node.type != FabricNode::Type::kCa) continue;
    bool in_switch = Contains(node.description, "Aggregation Node");
    for (const FabricPort& port : node.ports) {
      auto it = by_id.find(port.remote_id);
      if (it == by_id.end()) continue;
      in_switch |= node.system_image_guid != 0 &&
                   it->second->type != FabricNode::Type::kCa &&
                   it->second->system_image_guid == node.system_image_guid;
    }
    if (in_switch) {
      ++result.switch_adapters;
      continue;
    }
    // Which node this adapter belongs to: a port GUID an agent reported,
    // else its node GUID.
    std::optional<size_t> agent;
    for (const FabricPort& port : node.ports) {
      auto it = agent_of_guid.find(port.port_guid);
      if (!agent.has_value() && port.port_guid != 0 &&
          it != agent_of_guid.end()) {
        agent = it->second;
      }
    }
    if (auto it = agent_of_guid.find(node.guid);
        !agent.has_value() && node.guid != 0 && it != agent_of_guid.end()) {
      agent = it->second;
    }
    std::string name;
    if (agent.has_value()) {
      name = agents[*agent].node;
    } else {
      name = HostFromNodeDescription(node.description);
      if (name.empty()) name = node.id;
      if (auto it = agent_of_name.find(name); it != agent_of_name.end()) {
        agent = it->second;
      }
    }
    if (agent.has_value()) agent_matched[*agent] = true;
    host_cas.push_back(name);
    for (const FabricPort& port : node.ports) {
      if (!is_switch(port.remote_id)) continue;
      TopologySpec::Attachment at;
      at.node = name;
      at.switch_name = switch_name[port.remote_id];
      at.line = port.line;
      spec.attachments.push_back(std::move(at));
      attached.insert(name);
      if (port.port_guid != 0) port_guids[port.port_guid] = name;
    }
  }

  if (switches.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        fabric.source,
        ": the fabric has no switch, so there is no tree to "
        "build (",
        host_cas.size(), " adapter(s) found: ",
        absl::StrJoin(host_cas.begin(),
                      host_cas.begin() + std::min<size_t>(host_cas.size(), 5),
                      ", "),
        host_cas.size() > 5 ? ", ..." : "", ")"));
  }

  // Cables between switches, each once (both ends list it).
  std::set<std::pair<std::string_view, uint32_t>> seen_ends;
  for (const FabricNode* s : switches) {
    for (const FabricPort& port : s->ports) {
      if (!is_switch(port.remote_id)) continue;
      if (seen_ends.count({port.remote_id, port.remote_port}) != 0) continue;
      seen_ends.insert({s->id, port.port});
      TopologySpec::Link link;
      link.a = switch_name[s->id];
      link.b = switch_name[port.remote_id];
      link.line = port.line;
      spec.links.push_back(std::move(link));
    }
  }

  absl::StatusOr<Topology> topology = Topology::Build(std::move(spec));
  if (!topology.ok()) return topology.status();
  result.topology = *std::move(topology);
  result.node_of_port_guid = std::move(port_guids);
  for (const std::string& node : result.topology.nodes()) {
    if (agent_of_name.count(node) == 0) result.unserved.push_back(node);
  }
  for (size_t i = 0; i < agents.size(); ++i) {
    if (!agent_matched[i]) result.unknown_agents.push_back(agents[i].node);
  }
  std::set<std::string> detached_seen;
  for (const std::string& name : host_cas) {
    if (attached.count(name) == 0 && detached_seen.insert(name).second) {
      result.detached.push_back(name);
    }
  }
  return result;
}

}  // namespace gantry

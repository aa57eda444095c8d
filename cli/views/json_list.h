// Prints {"KEY": [ITEM, ...]} one item at a time, exactly as
// nlohmann::json{{KEY, items}}.dump(2) would, without holding the whole
// document: `gantry queue --all --json` over 50,000 jobs built a tree of
// every job, copied it into the document, then one 100 MB string, and
// spent most of its 9 s allocating and freeing them.
//
// Not thread-safe; one writer per stream.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gantry::cli {

class JsonListWriter {
 public:
  JsonListWriter(std::ostream& out, std::string_view key);
  ~JsonListWriter();  // ends the document when Finish was not called
  JsonListWriter(const JsonListWriter&) = delete;
  JsonListWriter& operator=(const JsonListWriter&) = delete;

  void Add(const nlohmann::json& item);
  // Closes the list and the document, with a final newline.
  void Finish();

 private:
  std::ostream& out_;
  bool empty_ = true;
  bool finished_ = false;
  std::string buffer_;  // one item's text, reused
};

}  // namespace gantry::cli

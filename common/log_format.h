// How a log line looks, decided by where stderr goes. A file or terminal
// gets self-contained logfmt lines with a timestamp; systemd's journal,
// which timestamps every line itself, gets the line without `ts=` and with
// a `<N>` syslog priority prefix (sd-daemon(3)), so that `journalctl -p
// warning` and the priority colours work.
//
// Pure functions (the caller reads the environment and stats stderr);
// thread-safe.
#pragma once

#include <sys/types.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "common/log.h"

namespace gantry::log {

enum class Sink { kPlain, kJournal };

// sd-daemon's rule: stderr is the journal's stream when $JOURNAL_STREAM
// ("DEVICE:INODE", decimal) names stderr's st_dev and st_ino. Anything
// else, including an unset or malformed variable (a child of a journald
// service whose stderr was redirected still inherits it), is kPlain.
Sink SinkOf(std::string_view journal_stream, dev_t stderr_dev,
            ino_t stderr_ino);

// One line, with its trailing newline. `timestamp` is used only by kPlain.
std::string FormatLine(Sink sink, Level level, std::string_view timestamp,
                       std::string_view component, std::string_view message,
                       std::initializer_list<Field> fields);

}  // namespace gantry::log

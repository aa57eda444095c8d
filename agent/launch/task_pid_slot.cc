#include "agent/launch/task_pid_slot.h"

#include <algorithm>
#include <string_view>

namespace gantry::agent {

TaskPidSlot ReserveTaskPid(std::vector<std::string>& environment) {
  const std::string_view prefix = kTaskPidPrefix;
  std::erase_if(environment, [&](const std::string& entry) {
    return entry.starts_with(prefix);
  });
  std::string placeholder(prefix);
  placeholder.append(kTaskPidRoom - 1, '0');
  // Before the first larger key, keeping the order by key.
  const std::string_view key = prefix.substr(0, prefix.size() - 1);
  auto at = std::find_if(environment.begin(), environment.end(),
                         [&](const std::string& entry) {
                           const std::string_view view = entry;
                           return view.substr(0, view.find('=')) > key;
                         });
  at = environment.insert(at, std::move(placeholder));
  // The string's own terminating NUL is the last byte of the room.
  return {at->data() + prefix.size(), kTaskPidRoom};
}

void FillTaskPid(const TaskPidSlot& slot, pid_t pid) {
  if (slot.digits == nullptr || slot.room == 0) return;
  char reversed[kTaskPidRoom];
  size_t count = 0;
  // A pid is positive; anything else writes an empty value.
  auto value = static_cast<unsigned long>(pid > 0 ? pid : 0);
  while (value > 0 && count < sizeof reversed) {
    reversed[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  if (value > 0 || count + 1 > slot.room) count = 0;
  for (size_t i = 0; i < count; ++i) slot.digits[i] = reversed[count - 1 - i];
  slot.digits[count] = '\0';
}

}  // namespace gantry::agent

#include "agent/launch/task_pid_slot.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cstring>

namespace gantry::agent {
namespace task_pid_slot_test {

std::string Value(const std::vector<std::string>& environment) {
  for (const std::string& entry : environment) {
    if (entry.rfind(kTaskPidPrefix, 0) == 0) {
      // As execve reads it: up to the first NUL.
      return std::string(entry.c_str() + std::strlen(kTaskPidPrefix));
    }
  }
  return "<absent>";
}

TEST_CASE("the task pid slot replaces an inherited SLURM_TASK_PID",
          "[task_pid]") {
  std::vector<std::string> environment = {"HOME=/home/u", "SLURM_TASK_PID=4242",
                                          "SLURM_TASKS_PER_NODE=2", "Z=1"};
  const TaskPidSlot slot = ReserveTaskPid(environment);
  REQUIRE(slot.digits != nullptr);
  CHECK(slot.room == kTaskPidRoom);
  CHECK(std::count_if(environment.begin(), environment.end(), [](auto& e) {
          return e.rfind("SLURM_TASK_PID=", 0) == 0;
        }) == 1);
  FillTaskPid(slot, 7);
  CHECK(Value(environment) == "7");
  // Still in key order (SLURM_TASKS_ sorts before SLURM_TASK_P: 'S' < '_').
  CHECK(environment == std::vector<std::string>{"HOME=/home/u",
                                                "SLURM_TASKS_PER_NODE=2",
                                                environment[2], "Z=1"});
  CHECK(environment[2].rfind("SLURM_TASK_PID=7", 0) == 0);
}

TEST_CASE("the task pid slot holds any pid", "[task_pid]") {
  std::vector<std::string> environment;
  const TaskPidSlot slot = ReserveTaskPid(environment);
  REQUIRE(environment.size() == 1);
  FillTaskPid(slot, INT_MAX);
  CHECK(Value(environment) == std::to_string(INT_MAX));
  FillTaskPid(slot, 1);
  CHECK(Value(environment) == "1");
  FillTaskPid(slot, ::getpid());
  CHECK(Value(environment) == std::to_string(::getpid()));
  // The string's own end is never overwritten.
  CHECK(environment[0].size() ==
        std::strlen(kTaskPidPrefix) + kTaskPidRoom - 1);
}

TEST_CASE("a slot too small or a bad pid leaves an empty value", "[task_pid]") {
  char room[4] = {'x', 'x', 'x', 'x'};
  FillTaskPid({room, sizeof room}, 12345);
  CHECK(room[0] == '\0');
  char enough[8] = {};
  FillTaskPid({enough, sizeof enough}, -3);
  CHECK(enough[0] == '\0');
  FillTaskPid({enough, sizeof enough}, 123);
  CHECK(std::string(enough) == "123");
  FillTaskPid({}, 5);  // no slot: nothing to write, no crash
}

}  // namespace task_pid_slot_test
}  // namespace gantry::agent

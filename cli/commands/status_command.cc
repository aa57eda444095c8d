#include "cli/commands/status_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/client/controller_client.h"
#include "cli/views/printable_records.h"
#include "cli/views/status_screen.h"

namespace gantry::cli {

int RunStatusCommand(const std::string& controller,
                     const StatusOptions& options) {
  absl::StatusOr<ColorMode> mode = ParseColorMode(options.color);
  if (!mode.ok()) {
    std::cerr << "gantry status: error: " << mode.status().message() << "\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ClusterStatusResponse status;
  if (absl::Status error = client.ClusterStatus(status); !error.ok()) {
    std::cerr << "gantry status: error: " << error.message() << "\n";
    return 1;
  }
  MakePrintable(status,
                options.json ? OutputKind::kJson : OutputKind::kTerminal);
  if (options.json) {
    std::cout << StatusToJson(status, client.target()).dump(2) << "\n";
    return 0;
  }
  StatusScreenOptions screen;
  screen.color = ShouldUseColor(*mode, isatty(STDOUT_FILENO) == 1,
                                std::getenv("NO_COLOR"), std::getenv("TERM"));
  screen.unicode = LocaleIsUtf8(std::getenv("LC_ALL"), std::getenv("LC_CTYPE"),
                                std::getenv("LANG"));
  screen.controller = client.target();
  std::cout << RenderStatusScreen(status, screen);
  return 0;
}

void AddStatusCommand(CommandTable& commands) {
  CLI::App* status = commands.app().add_subcommand(
      "status",
      "Cluster overview for admins: controller health, nodes and GPUs by "
      "state, GPU utilization, jobs, pending reasons, fabric, dataset "
      "caches, recent failures");
  auto options = std::make_shared<StatusOptions>();
  status->add_flag("--json", options->json,
                   "Machine-readable output (a stable JSON document)");
  status
      ->add_option("--color", options->color,
                   "auto (on a terminal, unless NO_COLOR is set), always or "
                   "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  commands.Add(status, [options](const std::string& controller) {
    return RunStatusCommand(controller, *options);
  });
}

}  // namespace gantry::cli

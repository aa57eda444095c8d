#include "cli/status_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/controller_client.h"
#include "cli/printable_records.h"
#include "cli/status_screen.h"

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

}  // namespace gantry::cli

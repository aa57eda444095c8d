// What `gantry --version`, `gantry batch -V` (sbatch) and `gantry run -V`
// (srun) print, so that the three say the same.
#pragma once

namespace gantry::cli {

inline constexpr char kVersionLine[] = "gantry " GANTRY_VERSION;

}  // namespace gantry::cli

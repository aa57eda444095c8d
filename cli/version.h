// What `gantry --version`, `gantry batch -V` (sbatch) and `gantry run -V`
// (srun) print, so that the three say the same; and what the Slurm-named
// query commands print.
#pragma once

namespace gantry::cli {

inline constexpr char kVersionLine[] = "gantry " GANTRY_VERSION;

// What the Slurm-named query commands print for -V and scontrol version:
// the Slurm release whose commands and output Gantry follows first, for
// scripts that parse "slurm X.Y.Z", then Gantry's own version.
inline constexpr char kSlurmVersion[] = "22.05.8";
inline constexpr char kSlurmVersionLine[] =
    "slurm 22.05.8 (gantry " GANTRY_VERSION ")";

}  // namespace gantry::cli

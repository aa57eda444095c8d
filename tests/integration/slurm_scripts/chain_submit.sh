#!/bin/bash
# Submits a preprocess -> train -> evaluate pipeline, each stage waiting
# for the one before (a user's driver script, run on the login node).
set -e
pre=$(sbatch --parsable chain_preprocess.sbatch)
train=$(sbatch --parsable --dependency=afterok:$pre chain_train.sbatch)
eval_job=$(sbatch --parsable --dependency=afterany:$train chain_eval.sbatch)
echo "$pre $train $eval_job"

#!/usr/bin/env bash
# End to end test of the language model's commands: `ember train --model transformer` (record, curve, falling
# loss, the tokenizer in the record) and `ember generate` (prompt kept, length, seeded determinism, top-k 1 is
# greedy, clear errors). A tiny model on a tiny corpus, so it runs in about a second.
# Usage: lm_cli_test.sh path/to/ember
set -euo pipefail
ember="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for i in $(seq 1 40); do
  printf 'A fool and his money are soon parted.\n%%\nThe early bird catches the worm.\n%%\n'
done >"$dir/corpus.txt"
tiny=(--context 16 --d-model 32 --heads 2 --layers 1 --batch-size 8 --threads 1 --no-progress)
"$ember" train --model transformer --data "$dir/corpus.txt" "${tiny[@]}" --steps 150 --log-every 50 --lr 1e-2 \
  --seed 7 --out "$dir/lm.emr" >"$dir/train.log" || fail "train: $(cat "$dir/train.log")"
[ -s "$dir/lm.emr" ] && [ -s "$dir/lm.svg" ] || fail "train wrote no record or curve"
grep -q "perplexity" "$dir/lm.svg" || fail "the curve has no perplexity series"
grep -q "vocabulary 24" "$dir/train.log" || fail "the corpus's 24 distinct characters are not the vocabulary: $(cat "$dir/train.log")"
first=$(grep -E "^step +50/" "$dir/train.log" | sed -E 's/.* loss ([0-9.]+) .*/\1/')
last=$(grep -E "^step +150/" "$dir/train.log" | sed -E 's/.* loss ([0-9.]+) .*/\1/')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a && b < 0.5) }' || fail "loss did not fall below 0.5: $first -> $last"
"$ember" inspect "$dir/lm.emr" | grep -qF "qkv  (3,168 in 2 tensors)" || fail "inspect lacks the attention's qkv weight"

# export writes the PyTorch twin's names and layouts (Linear weights transposed); eval points to generate.
"$ember" export "$dir/lm.emr" --out "$dir/lm.safetensors" | grep -q "PyTorch names of the transformer" ||
  fail "export did not use the transformer's PyTorch names"
"$ember" inspect "$dir/lm.safetensors" | grep -F "blocks.0.qkv.weight" | grep -qF "[96, 32]" ||
  fail "the exported qkv weight is not PyTorch's [out, in]: $("$ember" inspect "$dir/lm.safetensors")"
"$ember" eval "$dir/lm.emr" 2>"$dir/err.txt" && fail "eval accepted a language model"
grep -q "ember generate" "$dir/err.txt" || fail "unclear message: $(cat "$dir/err.txt")"

gen() { "$ember" generate "$dir/lm.emr" --threads 1 "$@"; }
a=$(gen --prompt "The early" --length 40 --seed 3)
b=$(gen --prompt "The early" --length 40 --seed 3)
[ "$a" = "$b" ] || fail "the same seed sampled different text: '$a' / '$b'"
case "$a" in "The early"*) ;; *) fail "the output does not start with the prompt: '$a'" ;; esac
[ "$(printf '%s' "$a" | wc -c)" -le 49 ] || fail "more than prompt + 40 characters: '$a'"
c=$(gen --prompt "The early" --length 40 --seed 4 --temperature 2)
[ "$a" != "$c" ] || fail "another seed and temperature sampled the same text"
# top-k 1 keeps the likeliest character only: the seed no longer matters, and the learnt line comes back.
g1=$(gen --prompt "The early" --length 20 --top-k 1 --seed 1)
g2=$(gen --prompt "The early" --length 20 --top-k 1 --seed 2)
[ "$g1" = "$g2" ] || fail "greedy sampling depends on the seed: '$g1' / '$g2'"
case "$g1" in "The early bird"*) ;; *) fail "greedy text after 150 steps is not the corpus's: '$g1'" ;; esac

# Errors: a character outside the vocabulary, a record that is not a language model, --epochs.
if gen --prompt "Zebra" --length 5 2>"$dir/err.txt"; then fail "a prompt outside the vocabulary was accepted"; fi
grep -q "'Z' is not in the model's vocabulary" "$dir/err.txt" || fail "unclear message: $(cat "$dir/err.txt")"
"$ember" train --model mlp --epochs 1 --out "$dir/mlp.emr" --no-progress --threads 1 >/dev/null
"$ember" generate "$dir/mlp.emr" 2>"$dir/err.txt" && fail "generate accepted a digits record"
grep -q "not a language model" "$dir/err.txt" || fail "unclear message: $(cat "$dir/err.txt")"
"$ember" train --model transformer --epochs 2 --data "$dir/corpus.txt" "${tiny[@]}" 2>"$dir/err.txt" >/dev/null &&
  fail "--epochs was accepted for the transformer"
grep -q "steps" "$dir/err.txt" || fail "unclear message: $(cat "$dir/err.txt")"
echo "lm cli: ok ($first -> $last; '$g1')"

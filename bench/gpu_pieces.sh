#!/bin/bash
# The GPU measurements of issues 13 and 16 as pieces of at most 10 minutes, one device call each (plan: bench/results/README.md).
# Here, first: bash tools/device_prep.sh. Then each call: run(command="bash bench/gpu_pieces.sh PIECE", carry=[".devdata", ".whl"]).
# Every record lands under $OUT/<piece>/ (at most 8 files come back); copy them into bench/results/ and commit. $OUT is
# emptied before each call, so what a later call reads (models, sweep points, rho's choice, an evaluation to continue)
# lives in RUNS (/tmp/runs) and KEEP (/tmp/keep) on the warm machine, and is copied to $OUT. The pieces that compile run
# through bench/compile_cache.py, which warms torch.compile from the committed bench/compile_artifacts; what a piece compiled
# anew comes back beside its records as compile-cache_<GPU>_<name>.bin: bash tools/keep_compile_cache.sh FILES_AT files it.
#   queue ITEM...     the pieces, each ITEM `[VAR=VALUE ...] PIECE`, one after another in a process session of their own
#                     (setsid), which outlives the call (it returns at once) and is bound by the machine's 30 minutes, not
#                     a call's 10: queued, `chain` runs until done (or MAX_MINUTES, 27) and no piece is cut at 10 minutes
#   wait [SECONDS]    up to SECONDS (560): returns when a queued piece finishes, with its files in $OUT as if it had run
#                     alone (one piece a call), the log since the last wait and each finished piece's exit code and time;
#                     call it again at once (the machine goes back 30 s after a call) until every piece is returned
#   salvage           for the last call before the machine goes: ends the running queued piece (SIGTERM; the queue starts no
#                     other) and returns, as wait does, what it finished (an evaluation's or active learning's runs, marked
#                     `salvaged` for tools/file_eval_parts.sh; a sweep's points) with what it compiled anew; if it has not
#                     ended within SALVAGE_WAIT (45) s, what it has finished so far, without that
#   speed   (~6 min)  where a step's time goes (torch.profiler), and 10 epochs before and after the speed work, same seed,
#                     plus the new code with another seed: bench/compare_curves.py says whether the curves agree
#                     (the new code clamps its crops as the old one did, so only the speed work differs)
#   modes   (~6 min)  10 epochs of the recipe under each torch.compile mode (PretrainConfig.compile_mode), same seed: s/epoch each
#   optim   (~3 min)  10 epochs of the recipe with the LARS update eager and compiled (PretrainConfig.fused_optimizer), same
#                     seed: s/epoch each, and where a step's time goes with it compiled (profile.json: Optimizer.step#LARS.step)
#   sweep   (~5 min)  50-epoch sweep points on the recipe (tau_p 4 since 2026-11-24, weight decay 5e-4 since 2026-11-26): what
#                     issue 13 named and no record has, SimCLR's 2048-wide head with the recipe's clipping, and task size M
#                     500 at the same peak rate per step (the paper's appendix C, which does not say it rescaled the rate:
#                     0.81 / 0.80 at M 500 / 1000); 1-1.5 min a point once compiled, 1-1.5 more to compile a new shape;
#                     POINTS="name settings ..." replaces them; a point already recorded is skipped (copy earlier ones back in)
#   long    (~6 min)  the recipe (RECIPE: flags that change it, e.g. '--ntxent-tau 0.2' for SimCLR's loss; RECIPE=best: the best
#                     SS-BNN point recorded by `sweep`, on the warm machine or in bench/results; POINT='NAME SETTINGS': a point
#                     as the sweep takes it) for EPOCHS (200) with Laplace
#                     readouts at 50/500/5000 x 3 seeds; the record is named by what ran (bench/pretrain_cifar.py's record_name)
#   peer    (~3 min)  SimCLR as lightly's CIFAR-10 benchmark trains it, in a loop that shares no training code with ssbnn (per-image
#                     torchvision transforms in DataLoader workers, pytorch-cifar's ResNet-18, each view on its own through batch
#                     norm: bench/peer_simclr.py), for EPOCHS (50) with the simclr-sgd sweep point's settings (SGD 0.47, decay
#                     5e-4 on weights, warm-up a tenth of the epochs up to 10, NT-Xent 0.5): against that point, whether the gap
#                     to lightly's kNN is ssbnn's pipeline or the recipe; PEER adds flags (e.g. '--joint-bn', named in the record)
# Issue 16 (the paper's tables), after issue 13:
#   rho     (~2 min)  rho under the BNN prior timed eight ways (bench/rho_speed.py, 512 networks): the fastest sets table1's flags
#   table1  (~15 min) Table 1 (bench/prior_cifar.py): the SS prior's ResNet-20-FRN pretrained for EPOCHS (200) at batch 500, and
#                     8,192 BNN-prior networks run the way `rho` found fastest (2 priors x 3 groups: ~12 min at the 2026-11-24
#                     rate, so queue it, `queue rho table1`, unless rho's compiled variants are much faster); PRIORS (e.g.
#                     bnn-gaussian, or self-supervised) scores a part, for sessions too short for all: join them with --merge
#   ddp     (~8 min)  the one-GPU overhead of the DDP path (bench/ddp_overhead.py, 10 epochs, 2 runs of each kind), then one
#                     pair with SyncBatchNorm; each record says what ran (backend, SyncBatchNorm layers, compiled graphs)
#   chain   (9 min)   one piece of an EPOCHS (1000) SS-BNN pretraining with SEED (0) in /tmp/runs on the warm machine; run it
#                     again until its results.json says finished (1.25 s/epoch: three pieces); OBJECTIVE=simclr pretrains
#                     SimCLR instead (NT-Xent at NTXENT_TAU, 0.45). The machine is given back after 30 minutes held, so a
#                     chain and everything that uses its model run in one session
#   evaluate (~9 min) ssbnn-evaluate on CIFAR-10: METHODS (ss-bnn,ss-map) with the chained models of SEEDS ("0"; "" for
#                     none: baselines only; METHODS without ss-bnn, ss-map or ss-bnn-ensemble use none), label seeds
#                     FIRST_SEED (the first of SEEDS) on, LABEL_SEEDS (1) of them, BUDGETS (50,500,5000,all; set, it names
#                     the part: eval_cifar10_<methods>_s<first>[_m<seeds>][_b<budgets>]), STAR_EPOCHS
#                     (SS-BNN*'s pretraining, if METHODS has it), KEEP_PREDICTIONS (methods whose predictions are kept for
#                     ensembles of sessions, e.g. ss-bnn: they come back as predictions.tar.N, parts of at most 15 MiB); cut
#                     off by the time limit, the same call continues it (partial.json, on the warm machine), and a part
#                     of no pretrained model (the baselines) an earlier session salvaged, the session's calls carry
#                     (tools/carry_salvaged.py); parts of sessions join here with ssbnn-evaluate --merge
#   laplace (~1 min)  the last-layer Laplace predictive, ssbnn's against laplace-torch's (bench/laplace_predict.py, 150,000 inputs)
#   active  (~9 min)  active learning (bench/active_cifar.py), label seed SEED (0), with the chained EPOCHS (500) SS-BNN and SimCLR
#                     of pretraining seed SEED, those METHODS use (ss-bnn-bald,ss-bnn-random,simclr-entropy; set, it names the part:
#                     ensemble-bald uses neither, ss-bnn-bald,ss-bnn-random no SimCLR), ENSEMBLE_BUDGET (the
#                     deep ensemble's last label count, if METHODS has ensemble-bald; default all 500); cut off by the time
#                     limit, the same call continues it (partial.json, on the warm machine), and a salvaged ensemble-bald part
#                     the session's calls carry (tools/carry_salvaged.py); parts join with active_cifar.py --merge
set -uo pipefail
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "${ROOT:-$(dirname "$SELF")/..}"
OUT=${OUT:-/tmp/out} RUNS=${RUNS:-/tmp/runs} KEEP=${KEEP:-/tmp/keep}
PIECES="speed modes optim sweep long peer rho table1 ddp chain evaluate active laplace"   # what an item may run
piece=${1:?which piece: ${PIECES// /, }, or queue / wait / salvage}
Q=$KEEP/queue
part_back() {  # WORK DEST: a part's records (an evaluation's or active learning's, finished or partial), and an evaluation's kept
               # predictions as tar parts (8 files of 16 MiB come back)
  mkdir -p "$2"
  for f in results.json tables.md evaluation.png active.md active.png partial.json; do [ -f "$1/$f" ] && cp "$1/$f" "$2/"; done
  if [ -d "$1/predictions" ]; then tar -C "$1" -cf - predictions | split -b 15M -d -a 1 - "$2/predictions.tar."; fi; return 0
}
mark_salvaged() {  # DEST: a part returned with its finished runs only, which no call will continue: marked for tools/file_eval_parts.sh
  if [ -f "$1/partial.json" ] && [ ! -f "$1/results.json" ]; then touch "$1/salvaged"
  elif [ ! -f "$1/results.json" ]; then rm -rf "$1"; echo "salvage: $(basename "$1") had finished no run yet"; fi; return 0
}
continue_from() {  # KIND NAME WORK: a part an earlier session salvaged (tools/carry_salvaged.py put it in CONTINUE, .devdata/continue,
                   # carried: its partial.json in a folder claimed for the program) becomes WORK, which this call continues
  local src=${CONTINUE:-.devdata/continue}/$1/$2
  [ -f "$src/partial.json" ] && [ ! -e "$3" ] || return 0
  mkdir -p "$(dirname "$3")" && cp -r "$src" "$3" && echo "$1: continuing $2 from the runs an earlier session's salvaged part finished ($src;" \
    "it refuses other settings: CONTINUE=none in the item starts afresh)"
}
lines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }
children() {  # PID: its child processes, from /proc (no procps needed)
  local f s w; for f in /proc/[0-9]*/stat; do { s=$(< "$f"); } 2>/dev/null || continue; read -r -a w <<< "${s##*) }"   # after the
    [ "${w[1]:-}" = "$1" ] || continue; f=${f#/proc/}; echo "${f%/stat}"; done; }                                # name: state, parent
ended=" "
end_piece() {  # the queue's running piece: SIGTERM to its runner (timeout, or python), whose exit saves what it compiled; once
  local piece p; for piece in $(children "$(cat "$Q/pid")"); do for p in $(children "$piece"); do   # a process: a second one
    [[ $ended == *" $p "* ]] && continue                                                           # would cut that save short
    case $(cat "/proc/$p/comm" 2>/dev/null) in timeout|python*) kill -TERM "$p" 2>/dev/null; ended+="$p " ;; esac; done; done; return 0; }
lim() {   # DEADLINE [QUEUED]: seconds left until DEADLINE s after this script started (device_env.sh's install counts), at least 1;
          # queued, QUEUED (1740) from now: a queued piece is not bound by one call's 10 minutes
  if [ -n "${QUEUED:-}" ]; then echo "${2:-1740}"; else local left=$(( $1 - SECONDS )); echo $(( left > 0 ? left : 1 )); fi; }
fail=0
note() { [ "$fail" -ne 0 ] || fail=$1; }                 # a piece exits with the status of its first failed command
step() {   # COMMAND...: run it, noting a failure; queued, none once `salvage` has stopped the queue (its piece's later steps)
  if [ -n "${QUEUED:-}" ] && [ -f "$Q/stop" ]; then echo "stopped by salvage, not run: ${*:1:3} ..."; note 143; return 143; fi
  "$@"; local rc=$?; [ "$rc" -eq 0 ] || note "$rc"; return "$rc"; }
case $piece in
queue)        # the pieces named, one after another, in a process of their own that outlives this call (setsid)
  shift; [ $# -gt 0 ] || { echo "queue: name the pieces, e.g. queue 'SEED=0 chain' 'SEEDS=0 evaluate'"; exit 2; }
  for item in "$@"; do   # each item one line ending in a piece, checked before anything starts: a line broken inside a
    [[ " $PIECES " == *" ${item##*[[:space:]]} "* ]] ||   # quoted item would otherwise run its tail with no settings at all
      { echo "queue: the item '${item//$'\n'/\\n}' does not end in a piece (${PIECES// /, })"; exit 2; }
    [[ $item != *$'\n'* ]] || { echo "queue: the item '${item//$'\n'/\\n}' spans lines; give each item on one line"; exit 2; }
  done
  if [ -f "$Q/pid" ] && [ ! -f "$Q/finished" ] && kill -0 "$(cat "$Q/pid")" 2>/dev/null; then echo "queue: one is running already (bash bench/gpu_pieces.sh wait)"; exit 2; fi
  source tools/device_env.sh || exit 1
  rm -rf "$Q"; mkdir -p "$Q"; cp "$SELF" "$Q/pieces.sh"                  # what the queue reads, copied: a later call re-sends the
  cp "$ARCHIVE" "$Q/" || exit 1; export ARCHIVE=$Q/$(basename "$ARCHIVE")          # tree and may leave out its ignored paths
  if [ -d "${CONTINUE:-.devdata/continue}" ]; then cp -r "${CONTINUE:-.devdata/continue}" "$Q/continue"; export CONTINUE=$Q/continue; fi
  printf '%s\n' "$@" > "$Q/items"
  ROOT=$PWD setsid nohup bash "$Q/pieces.sh" _run > "$Q/log" 2>&1 < /dev/null & echo $! > "$Q/pid"
  sleep 2; cat "$Q/log"; echo "queued $# pieces: bash bench/gpu_pieces.sh wait"; exit 0 ;;
_run)         # the queue's own process: each item is `[VAR=VALUE ...] PIECE`, its files in $Q/out/<n>
  echo $$ > "$Q/pid"; n=0
  while IFS= read -r item; do
    [ ! -f "$Q/stop" ] || { echo "=== stopped by salvage before: $item"; break; }
    n=$((n + 1)); start=$(date +%s); echo "=== $n: $item ($(date -u +%T))"; echo "$n: $item" > "$Q/current"
    (if [ "${item% *}" != "$item" ]; then eval "export ${item% *}"; fi
     OUT=$Q/out/$n QUEUED=1 exec bash "$Q/pieces.sh" "${item##* }" < /dev/null)
    echo "$n $? $(( $(date +%s) - start )) $item" >> "$Q/status"
  done < "$Q/items"
  echo "=== queue finished ($(date -u +%T))"; rm -f "$Q/current"; touch "$Q/finished"; exit 0 ;;
wait)         # up to ${2:-560} s: returns when a queued piece finishes, with its files in $OUT (one piece a call)
  [ -f "$Q/items" ] || { echo "wait: no queue on this machine (bash bench/gpu_pieces.sh queue ...)"; exit 2; }
  mkdir -p "$OUT"; total=$(wc -l < "$Q/items"); limit=$(( SECONDS + ${2:-560} ))
  while :; do
    copied=$(cat "$Q/copied" 2>/dev/null || echo 0); done_=$(lines "$Q/status")
    if [ "$done_" -gt "$copied" ]; then
      n=$((copied + 1)); [ -d "$Q/out/$n" ] && cp -r "$Q/out/$n/." "$OUT/"; echo "$n" > "$Q/copied"; break
    fi
    [ -f "$Q/finished" ] && break
    kill -0 "$(cat "$Q/pid")" 2>/dev/null || { echo "wait: the queue's process is gone before its end (log below)"; break; }
    [ "$SECONDS" -ge "$limit" ] && break
    sleep 3
  done
  tail -c +$(( $(cat "$Q/seen" 2>/dev/null || echo 0) + 1 )) "$Q/log" | tail -c 9000; wc -c < "$Q/log" > "$Q/seen"
  echo "--- queue: $(lines "$Q/status") of $total pieces done, $(cat "$Q/copied" 2>/dev/null || echo 0) returned;" \
       "started $(( $(date +%s) - $(stat -c %Y "$Q/items") )) s ago$([ -f "$Q/current" ] && echo "; running $(cat "$Q/current")")"
  while read -r n rc secs item; do echo "    $n: exit $rc after $secs s: $item"; done < <(cat "$Q/status" 2>/dev/null || true)
  find "$OUT" -type f | sed "s|^$OUT/|    back: |"; exit 0 ;;
salvage)      # before the machine's 30 minutes end: the queue stopped, its running piece ended, and what it finished, into $OUT
  [ -f "$Q/items" ] || { echo "salvage: no queue on this machine"; exit 2; }
  [ -f "$Q/finished" ] || touch "$Q/stop"          # first: the queue starts no piece after the one running now
  if [ "$(lines "$Q/status")" -gt "$(cat "$Q/copied" 2>/dev/null || echo 0)" ]; then   # a piece that ended since the last wait:
    bash "$SELF" wait 1                                                                 # returned as wait returns it (8 files a call)
    [ -f "$Q/current" ] && [ ! -f "$Q/finished" ] && echo "salvage: call salvage again for the piece still running, $(cat "$Q/current")"
    exit 0; fi
  if ! { [ -f "$Q/current" ] && [ ! -f "$Q/finished" ]; }; then echo "salvage: no queued piece is running"; exit 2; fi
  read -r n item < "$Q/current"; n=${n%:}; end_piece
  for ((i = 0; i < ${SALVAGE_WAIT:-45}; i++)); do   # ended (again each second: a piece between two steps has no runner), it
    [ "$(lines "$Q/status")" -ge "$n" ] && { echo "salvage of $n: $item (ended by SIGTERM after $i s)"; exec bash "$SELF" wait 1; }
    end_piece; sleep 1                              # returns its part marked salvaged with what it compiled, as wait does
  done
  echo "salvage: piece $n did not end within ${SALVAGE_WAIT:-45} s of SIGTERM; what it has finished, without what it compiled"
  case ${item##* } in
    evaluate|active) p=${item##* }; work=$(ls -td "$KEEP/$p"/*/ 2>/dev/null | head -1)   # the part under way: its finished runs
              if [ -n "$work" ]; then w=$OUT/$p/$(basename "$work"); part_back "${work%/}" "$w"; mark_salvaged "$w"; fi ;;
    sweep) mkdir -p "$OUT/sweep"; find "$KEEP/sweep" -name '*.json' -newer "$Q/items" -exec cp {} "$OUT/sweep/" \; ;;
  esac
  echo "salvage of $n: $item"; find "$OUT" -type f | sed "s|^$OUT/|    back: |"; exit 0 ;;
esac
[ -n "${QUEUED:-}" ] || source tools/device_env.sh || exit 1               # queued, the queue's environment is inherited
mkdir -p "$OUT/$piece" "$KEEP/$piece"
# torch.compile's warm start (bench/compile_cache.py): the carried artifacts, joined with what this machine compiled
export COMPILE_CACHE=$KEEP/compile_cache; CARRIED=${CARRIED_CACHE:-bench/compile_artifacts}   # committed: it travels with the tree
mkdir -p "$COMPILE_CACHE"; touch "$COMPILE_CACHE/returned"
if [ -d "$CARRIED" ]; then cp -rn "$CARRIED/." "$COMPILE_CACHE/"                 # carried in: never sent back
  (cd "$CARRIED" && find . -name '*.bin' | sed 's|^\./||') >> "$COMPILE_CACHE/returned"; fi
cache_back() {  # artifacts compiled here and not carried in or returned yet, into $OUT/$piece while 8 files come back
  local f rel
  for f in "$COMPILE_CACHE"/*/*.bin; do
    [ -f "$f" ] && [ "$(find "$OUT" -type f | wc -l)" -lt 8 ] || continue; rel=${f#"$COMPILE_CACHE"/}
    grep -qxF "$rel" "$COMPILE_CACHE/returned" && continue
    if [ "$(stat -c %s "$f")" -gt 16777216 ]; then echo "compile cache: $rel is over the 16 MiB a file may come back with; not returned"
      echo "$rel" >> "$COMPILE_CACHE/returned"; continue; fi
    cp "$f" "$OUT/$piece/compile-cache_${rel//\//_}" && echo "$rel" >> "$COMPILE_CACHE/returned"
  done; return 0; }
case $piece in
speed)
  step python3 bench/compile_cache.py bench/pretrain_cifar.py --archive "$ARCHIVE" --epochs 10 --budgets "" --profile-steps 20 --out-dir "$OUT/speed" \
      --point after crops=clamped --point after-seed1 seed=1,crops=clamped
  before=${BEFORE:-.devdata/before}                  # the tree before the speed work (4e4ebcf), put there by tools/device_prep.sh
  [ -d "$before" ] || echo "speed: $before is missing: run bash tools/device_prep.sh here and carry .devdata"
  (cd "$before" && PYTHONPATH=${SITE:-/tmp/site}:. python3 bench/pretrain_cifar.py --archive "$ARCHIVE" --epochs 10 --budgets "" \
      --out "$OUT/speed/before.json") || note $?
  step python3 bench/compare_curves.py --before "$OUT/speed/before.json" --after "$OUT/speed/after.json" \
      --noise "$OUT/speed/after-seed1.json" --out "$OUT/speed/compare.json" ;;
modes)
  step timeout "$(lim 570)" python3 bench/compile_cache.py bench/pretrain_cifar.py --archive "$ARCHIVE" --epochs 10 --budgets "" --profile-steps 0 --out-dir "$OUT/modes" \
      --point default compile_mode=default --point autotune compile_mode=max-autotune-no-cudagraphs \
      --point graphs compile_mode=reduce-overhead ;;
optim)
  step timeout "$(lim 570)" python3 bench/compile_cache.py bench/pretrain_cifar.py --archive "$ARCHIVE" --epochs 10 --budgets "" --profile-steps 20 --fused-optimizer \
      --out-dir "$OUT/optim" --point eager fused_optimizer=0 --point fused fused_optimizer=1 ;;
sweep)
  read -r -a pts <<< "${POINTS:-head2048 head_width=2048 m500 batch_size=500}"
  args=(); for ((i = 0; i < ${#pts[@]}; i += 2)); do args+=(--point "${pts[i]}" "${pts[i+1]}"); done
  for ((i = 0; i < ${#pts[@]}; i += 2)); do          # a point recorded already is skipped
    [ -f "bench/results/sweep_cifar10_50ep/${pts[i]}.json" ] && cp -n "bench/results/sweep_cifar10_50ep/${pts[i]}.json" "$KEEP/sweep/"
  done
  step timeout "$(lim 570)" python3 bench/compile_cache.py bench/pretrain_cifar.py --archive "$ARCHIVE" --epochs 50 --budgets 500 --profile-steps 0 \
      --out-dir "$KEEP/sweep" "${args[@]}"
  for ((i = 0; i < ${#pts[@]}; i += 2)); do cp "$KEEP/sweep/${pts[i]}.json" "$OUT/sweep/" 2>/dev/null; done ;;   # only the asked-for
long)
  common=(--archive "$ARCHIVE" --epochs "${EPOCHS:-200}" --budgets 50,500,5000 --label-seeds 3 --profile-steps 0)
  if [ "${RECIPE:-}" = best ]; then          # the sweep's best SS-BNN point: its record is <point>-<EPOCHS>ep.json
    step python3 bench/compile_cache.py bench/pretrain_cifar.py "${common[@]}" --best-of "$KEEP/sweep" bench/results/sweep_cifar10_50ep --out-dir "$OUT/long"
  elif [ -n "${POINT:-}" ]; then             # 'NAME SETTINGS' as the sweep takes them: its record is <NAME>-<EPOCHS>ep.json
    read -r name over <<< "$POINT"
    step python3 bench/compile_cache.py bench/pretrain_cifar.py "${common[@]}" --point "$name-${EPOCHS:-200}ep" "$over" --out-dir "$OUT/long"
  else
    read -r -a settings <<< "${RECIPE:-}"   # flags that change the recipe's defaults (PretrainConfig.for_cifar10), e.g. '--tau-p 1'
    step python3 bench/compile_cache.py bench/pretrain_cifar.py "${common[@]}" "${settings[@]}" --out "$OUT/long/"     # named by what it ran (record_name)
  fi ;;
rho)
  step python3 bench/compile_cache.py bench/rho_speed.py --bnn-samples 512 --bnn-batch 32 --out "$KEEP/rho/rho_speed.json"; cp "$KEEP/rho/rho_speed.json" "$OUT/rho/" ;;
table1)       # PRIORS (all three unless set) scores some of them: a part, joined here with prior_cifar.py --merge
  priors=${PRIORS:-self-supervised,bnn-gaussian,bnn-laplace}; flags=()
  if [[ $priors == *bnn-* ]]; then
    [ -f "$KEEP/rho/rho_speed.json" ] || { echo "run the rho piece first, on this machine: its fastest variant sets the flags"; exit 2; }
    read -r -a flags <<< "$(python3 -c "import json, sys; v = json.load(open(sys.argv[1]))['fastest']
print(' '.join(f for f, on in (('--one-by-one', 'one-by-one' in v), ('--amp', 'bf16' in v), ('--channels-last', 'channels-last' in v), ('--compile', 'compiled' in v)) if on))" "$KEEP/rho/rho_speed.json")"
  fi
  name=prior_cifar10$([[ $priors == *self-supervised* ]] && echo "_${EPOCHS:-200}ep")$([ -n "${PRIORS:-}" ] && echo "_$(echo "$priors" | tr ',' '+')")
  step timeout "$(lim 580)" python3 bench/compile_cache.py bench/prior_cifar.py --archive "$ARCHIVE" --priors "$priors" --epochs "${EPOCHS:-200}" --bnn-batch 32 \
      "${flags[@]}" --out "$OUT/table1/$name.json" ;;
ddp)
  step timeout "$(lim 380)" python3 bench/ddp_overhead.py --archive "$ARCHIVE" --epochs 10 --repeats 2 --out "$OUT/ddp/ddp_overhead.json"
  step timeout "$(lim 580)" python3 bench/ddp_overhead.py --archive "$ARCHIVE" --epochs 10 --repeats 1 --sync-bn --out "$OUT/ddp/ddp_overhead_syncbn.json" ;;
chain)
  case ${OBJECTIVE:-ss-bnn} in
    ss-bnn) tag=c10-${EPOCHS:-1000}ep-s${SEED:-0}; objective=() ;;
    simclr) tag=c10-simclr-${EPOCHS:-1000}ep-s${SEED:-0}; objective=(--ntxent-tau "${NTXENT_TAU:-0.45}") ;;
    *) echo "OBJECTIVE must be ss-bnn or simclr, not ${OBJECTIVE}"; exit 2 ;;
  esac
  step python3 bench/compile_cache.py -c "from ssbnn.cli import pretrain_main; raise SystemExit(pretrain_main())" --archive "$ARCHIVE" --epochs "${EPOCHS:-1000}" \
      --seed "${SEED:-0}" "${objective[@]}" --max-minutes "${MAX_MINUTES:-$([ -n "${QUEUED:-}" ] && echo 27 || echo 8)}" --quiet --out "$RUNS/$tag"
  cp "$RUNS/$tag/results.json" "$OUT/chain/results_$tag.json"; cp "$RUNS/$tag/history.json" "$OUT/chain/history_$tag.json" ;;
evaluate)
  read -r -a seeds <<< "${SEEDS-0}"
  [[ ,${METHODS:-ss-bnn,ss-map}, =~ ,(ss-bnn|ss-map|ss-bnn-ensemble), ]] || seeds=()   # evaluation.POOLED: none of them, no model used
  models=(); for s in "${seeds[@]}"; do models+=(--model "$RUNS/c10-${EPOCHS:-1000}ep-s$s/model"); done
  first=${FIRST_SEED:-${seeds[0]:-0}}
  tag=$(IFS=-; echo "${seeds[*]}")                   # the models' seeds name the part too: sessions' parts differ by model
  name=eval_cifar10_$(echo "${METHODS:-ss-bnn,ss-map}" | tr ',' '-' | sed 's/\*/star/g')_s$first${tag:+_m$tag}${BUDGETS:+_b${BUDGETS//,/-}}   # budgets: a later part of other budgets is another part
  work=$KEEP/evaluate/$name                          # on the machine, so that a call cut off by its limit is continued by the next
  continue_from evaluate "$name" "$work"
  step timeout "$(lim 580)" python3 bench/compile_cache.py -c "from ssbnn.cli import evaluate_main; raise SystemExit(evaluate_main())" --data cifar10 --archive "$ARCHIVE" \
      "${models[@]}" ${STAR_EPOCHS:+--epochs "$STAR_EPOCHS"} --methods "${METHODS:-ss-bnn,ss-map}" --budgets "${BUDGETS:-50,500,5000,all}" --seed "$first" \
      --seeds "${LABEL_SEEDS:-1}" ${KEEP_PREDICTIONS:+--keep-predictions "$KEEP_PREDICTIONS"} --quiet --out "$work"
  part_back "$work" "$OUT/evaluate/$name"
  [ -z "${QUEUED:-}" ] || mark_salvaged "$OUT/evaluate/$name" ;;   # queued: ended by its limit, no call continues it
active)
  methods=${METHODS:-ss-bnn-bald,ss-bnn-random,simclr-entropy}     # other methods, or another ensemble budget, name another part
  budget=$([[ ,$methods, == *,ensemble-bald,* ]] && echo "${ENSEMBLE_BUDGET:-}")            # the ensemble's own, where it runs
  name=active_cifar10_${EPOCHS:-500}ep_s${SEED:-0}$([ "$methods" = ss-bnn-bald,ss-bnn-random,simclr-entropy ] || echo "_${methods//,/_}")${budget:+_to$budget}
  work=$KEEP/active/$name                            # on the machine, so that a call cut off by its limit is continued by the next
  continue_from active "$name" "$work"
  models=()                                          # the chained encoders of pretraining seed SEED, those its methods use
  [[ ,$methods, == *,ss-bnn-* ]] && models+=(--ssbnn-model "$RUNS/c10-${EPOCHS:-500}ep-s${SEED:-0}/model")
  [[ ,$methods, == *,simclr-entropy,* ]] && models+=(--simclr-model "$RUNS/c10-simclr-${EPOCHS:-500}ep-s${SEED:-0}/model")
  step timeout "$(lim 580)" python3 bench/compile_cache.py bench/active_cifar.py --archive "$ARCHIVE" --eval 9000 --val 1000 --seeds 1 --first-seed "${SEED:-0}" \
      "${models[@]}" --methods "$methods" ${budget:+--ensemble-budget "$budget"} --out "$work"
  part_back "$work" "$OUT/active/$name"
  [ -z "${QUEUED:-}" ] || mark_salvaged "$OUT/active/$name" ;;
peer)         # SimCLR as lightly trains it, in a loop of its own (bench/peer_simclr.py), with the simclr-sgd point's settings
  e=${EPOCHS:-50}; read -r -a extra <<< "${PEER:-}"; tag=$(echo "${PEER:-}" | tr -cd 'A-Za-z0-9._')   # names the device returns
  step timeout "$(lim 570)" python3 bench/peer_simclr.py --archive "$ARCHIVE" --epochs "$e" --warmup-epochs $(( e / 10 < 10 ? e / 10 : 10 )) \
      --decay weights --knn-every 5 "${extra[@]}" --out "$OUT/peer/peer_simclr_cifar10_${e}ep${tag:+_$tag}.json" ;;
laplace)
  step python3 bench/laplace_predict.py --inputs 150000 --out "$OUT/laplace/laplace_predict.json" ;;
*) echo "unknown piece $piece: ${PIECES// /, } (or queue, wait, salvage)"; exit 2 ;;
esac
cache_back; ls -la "$OUT/$piece"; exit "$fail"

#!/usr/bin/env bash
# Judge a bump on a TPU host with no network (docs/accelerators.md): the same pins on the host's CPU and on its
# chip side by side, each against golden values recorded there, so the chip's verdict also names what only it
# shows. Run from the repository's root, the wheels the host's index lacks in .whl-tpu/ (the docs list them):
#
#   examples/tpu-host/judge.sh [WORKDIR]          PLATFORM=tpu CANDIDATE="optax==0.2.8" by default
#
# The baseline is the host's own JAX and numpy with optax 0.2.6 and Flax 0.12.8; the entries run Python 3.11,
# the host's. With SKIP_CHIP=1 only the CPU half runs (a rehearsal on a machine without the chip). STEPS=golden
# then STEPS=upgrade (the same WORKDIR, or its cpu/ and tpu/ projects copied there) run the two steps as two
# commands, for a host that limits a command's time; SIDES=cpu, then SIDES=tpu (default: both, side by side) splits
# a step further, one platform a command, the chip's last (its verdict names what only it shows). Its exit status is the harness's: the largest of the steps it
# ran on either side (0 OK, 1 CHANGED, 2 could not record or judge); an upgrade after a recording that failed or
# did not finish (this command's or an earlier one's) is not run, and says so: 2. With OUT set, each side's logs, verdict and
# golden values go into $OUT/<side>.tgz.
set -u
REPO=$PWD; W=${1:-/tmp/upgrade-harness-tpu}; PLATFORM=${PLATFORM:-tpu}; CANDIDATE=${CANDIDATE:-optax==0.2.8}
STEPS=${STEPS:-golden upgrade}; SIDES=${SIDES:-cpu $PLATFORM}
export UV_DEFAULT_INDEX=${UV_DEFAULT_INDEX:-file:///opt/pypi/simple} UV_FIND_LINKS=$REPO/.whl-tpu UV_OFFLINE=1
export UV_PYTHON_DOWNLOADS=never
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }

tool() {  # the harness, installed from the host's index and the carried wheels
  mkdir -p "$W/platforms" || exit 2
  python3 -m venv "$W/tool" && "$W/tool/bin/pip" install -q --index-url "$UV_DEFAULT_INDEX" \
    --find-links "$REPO/.whl-tpu" "$REPO" || exit 2
}

project() {  # a team's project: the example regressor and its contracts, the host's own JAX and numpy pinned
  mkdir -p "$W/$1/reports" && cd "$W/$1" || exit 2
  cp -r "$REPO/examples/nnx-regressor/regressor" "$REPO/examples/nnx-regressor/contracts" .
  printf 'jax==0.10.2\njaxlib==0.10.2\noptax==0.2.6\nflax==0.12.8\nnumpy==2.4.6\n' > requirements.txt
  upgrade-harness init --builtin judge > init.log || exit 2
  sed -i 's/^pythonpath = .*/&\npython = "3.11"/' pyproject.toml
  ln -s "$W/platforms" reports/.platforms  # both verdicts' records in one place: the second names the difference
}

golden() {  # the baseline's values recorded on $1. On an accelerator, a float64-formula statement its numerics
  # break (a transcendental, a contraction at default precision) is recorded as the platform's departure: listed
  # in its verdict with how far it is from the formula, and the candidate judged against the chip's own values.
  local accept=(); [ "$1" = cpu ] || accept=(--accept-changes)
  project "$1"; say "$1: golden"
  upgrade-harness golden --record-builtin --platform "$1" "${accept[@]}" > golden.log 2>&1
  local status=$?; echo "$status" > "$W/$1/golden.status"; say "$1: golden exit $status"
}

upgrade() {  # the bump judged on $1 against its values: only those a recording wrote (its status 0)
  local recorded; recorded=$(cat "$W/$1/golden.status" 2>/dev/null || echo "none: it did not finish")
  if [ "$recorded" != 0 ]; then
    mkdir -p "$W/$1"; echo 2 > "$W/$1/upgrade.status"
    say "$1: upgrade not run: no golden values were recorded on $1 (golden exit $recorded; $W/$1/golden.log says why)"
    return
  fi
  cd "$W/$1" && mkdir -p reports && ln -sfn "$W/platforms" reports/.platforms || exit 2; say "$1: upgrade"
  upgrade-harness upgrade --platform "$1" --candidate "$CANDIDATE" > upgrade.log 2>&1
  local status=$?; echo "$status" > "$W/$1/upgrade.status"; say "$1: upgrade exit $status"; grep -A2 '^VERDICT' upgrade.log
}

side() {  # one platform's steps, each one's status written anew (none left from an earlier command's); a
  # recording that failed ends the side (upgrade refuses to judge against values it did not write)
  for step in $STEPS; do rm -f "$W/$1/$step.status"; "$step" "$1"; done
}

# A recording starts from nothing but the tool (the sides it records); a judging from its projects.
case " $STEPS " in *" golden "*)
  for side in $SIDES; do rm -rf "${W:?}/$side" "$W"/platforms/*-"$side".json "$W"/platforms/*-"$side".baseline.json.gz; done ;; esac
[ -x "$W/tool/bin/upgrade-harness" ] || tool
export PATH=$W/tool/bin:$PATH
ran() { case " $SIDES " in *" $1 "*) return 0 ;; esac; return 1; }
CPU=
if ran cpu; then
  nice -n 10 bash -c "$(declare -f say project golden upgrade side); $(declare -p REPO W CANDIDATE STEPS T0); side cpu" &
  CPU=$!  # the CPU half yields the cores to the chip's half, the longer one (its compiles)
fi
[ -z "${SKIP_CHIP:-}" ] && ran "$PLATFORM" && side "$PLATFORM"
[ -n "$CPU" ] && wait $CPU
say done
if [ -n "${OUT:-}" ]; then
  for side in $SIDES; do  # the CPU's values are the golden directory itself, a chip's under platforms/
    values=(golden/platforms/"$side"); [ "$side" = cpu ] && values=(--exclude=golden/platforms golden)
    [ -d "$W/$side" ] && tar czf "$OUT/$side.tgz" -C "$W/$side" init.log golden.log upgrade.log \
      reports/upgrade-summary.md reports/upgrade-summary.json "${values[@]}" 2>/dev/null
  done
fi
STATUS=0  # the harness's: the largest status of the steps this command ran, on the sides it ran
for side in $SIDES; do
  for step in $STEPS; do
    [ -f "$W/$side/$step.status" ] && [ "$(cat "$W/$side/$step.status")" -gt "$STATUS" ] && STATUS=$(cat "$W/$side/$step.status")
  done
done
exit "$STATUS"


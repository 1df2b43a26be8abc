#!/bin/sh
# bootorch deploy agent: writes a disk image to this node's disk, as Ironic's agent does. Runs from
# the deploy ramdisk (its init starts it when the kernel command line holds bootorch_deploy=1); needs
# a POSIX shell and busybox (wget, sha256sum, dd) or curl. Served by bootorch at
# /boot/v1/deploy-agent.sh.
#
# Protocol (README, "Disk deploys"): every step is a `deployHeartbeat` GraphQL mutation with the node
# credential. The first (STARTING) is the lookup: its answer carries the image URL, format, sha256 and
# the root device hints and hasConfigDrive. Then DOWNLOADING, VERIFYING, WRITING, WRITTEN, or FAILED
# with a reason (CHECKSUM_MISMATCH, NO_MATCHING_DISK, WRITE_ERROR, IMAGE_UNREACHABLE). With a config
# drive, the agent fetches it after verifying the image (GET /boot/v1/config-drive/<xname> with the
# same node credential), writes the image, then the drive at the end of the disk in a new MBR
# partition, heartbeating WRITING again with "config drive: ..." as its message; any failure there is
# WRITE_ERROR. While a step runs, the current
# state is re-sent every heartbeatIntervalSeconds; bootorch fails a node whose agent goes silent.
# After WRITTEN bootorch sets the boot device to disk and power-cycles the node.
# `deploy-agent.sh active`, run by the installed system once its network is up, is its first report
# (ACTIVE); bootorch accepts it only after it switched the node to its disk.
#
# Reads xname=, bootorch_url=, bootorch_token= from the kernel command line (as the reporter does).
# For tests: BOOTORCH_CMDLINE, BOOTORCH_SYS_BLOCK (/sys/block), BOOTORCH_DEV (/dev), BOOTORCH_TMP (/tmp).
# Exit 0 once written, 1 on a failure bootorch was told about, 2 when a value is missing, 3 when
# bootorch refused or could not be reached.
CMDLINE=${BOOTORCH_CMDLINE:-/proc/cmdline}
SYS_BLOCK=${BOOTORCH_SYS_BLOCK:-/sys/block}
DEV=${BOOTORCH_DEV:-/dev}
TMP=${BOOTORCH_TMP:-/tmp}
XNAME=; URL=; TOKEN=
for arg in $(cat "$CMDLINE"); do
  case "$arg" in
    xname=*) XNAME=${arg#*=} ;;
    bootorch_url=*) URL=${arg#*=} ;;
    bootorch_token=*) TOKEN=${arg#*=} ;;
  esac
done
for v in XNAME URL TOKEN; do
  eval "val=\$$v"
  if [ -z "$val" ]; then echo "bootorch-deploy: no $v on the kernel command line" >&2; exit 2; fi
done
log() { echo "bootorch-deploy: $*" >&2; }

post() {
  if command -v curl >/dev/null 2>&1; then
    curl -sS -m 20 -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" -d "$1" "$URL"
  else
    # busybox wget: no -T (Debian's busybox 1.35 crashes on it), so timeout bounds the call.
    timeout 20 wget -q -O - --header 'Content-Type: application/json' --header "Authorization: Bearer $TOKEN" \
      --post-data "$1" "$URL"
  fi
}

# heartbeat STATE [REASON] [MESSAGE]: retried for a while; the answer is left in $ANSWER.
# Messages go into JSON as they are, so they are kept to characters that need no escaping.
heartbeat() {
  reason=null; [ -n "$2" ] && reason="\"$2\""
  msg=$(printf '%s' "$3" | tr -cd 'A-Za-z0-9 ._:/=+-' | head -c 300)
  body='{"query":"mutation($id: ID!, $s: DeployHeartbeatState!, $r: DeployFailure, $m: String) { deployHeartbeat(id: $id, state: $s, reason: $r, message: $m) { __typename ... on DeployHeartbeatAccepted { imageUrl imageFormat imageChecksum rootDeviceSize rootDeviceName rootDeviceSerial hasConfigDrive heartbeatIntervalSeconds } ... on ReportRefused { code message } } }","variables":{"id":"'"$XNAME"'","s":"'"$1"'","r":'"$reason"',"m":"'"$msg"'"}}'
  n=0
  while [ $n -lt 10 ]; do
    n=$((n + 1))
    ANSWER=$(post "$body" 2>&1)
    case "$ANSWER" in
      *DeployHeartbeatAccepted*) return 0 ;;
      *ReportRefused*) log "$1 refused: $ANSWER"; return 1 ;;
    esac
    log "$1 not delivered (attempt $n): $(echo "$ANSWER" | head -c 200)"
    sleep $((2 * n))
  done
  return 1
}

# field NAME: a value from the last answer ("" for null).
field() { echo "$ANSWER" | sed -n 's/.*"'"$1"'":"\{0,1\}\([^",}]*\)"\{0,1\}[,}].*/\1/p' | sed 's/^null$//'; }

STATE_FILE=$TMP/bootorch-deploy-state
# step STATE [MESSAGE]: tell bootorch, and keep telling it every interval until the next step.
step() {
  heartbeat "$1" "" "$2" || exit 3
  echo "$1" > "$STATE_FILE"
}
fail() {
  log "failed: $1: $2"
  heartbeat FAILED "$1" "$2"
  [ -n "$KEEPER" ] && kill "$KEEPER" 2>/dev/null
  exit 1
}

# bytes FILE OFFSET [COUNT]: the bytes of FILE (or disk) at OFFSET as unsigned decimals.
bytes() { dd if="$1" bs=1 skip="$2" count="${3:-1}" 2>/dev/null | od -An -tu1; }
# le32 FILE OFFSET: the little-endian 32-bit number at OFFSET.
le32() {
  what=$1
  set -- $(bytes "$1" "$2" 4)
  [ $# -eq 4 ] || fail WRITE_ERROR "config drive: cannot read $what"
  echo $(($1 + ($2 << 8) + ($3 << 16) + ($4 << 24)))
}

# mbr_room FILE: whether FILE (the image, or the disk once written) starts with an MBR the config
# drive's partition can be added to; sets SLOT (the first free entry) and USED (the end of the last
# partition, sectors), or fails WRITE_ERROR saying why.
mbr_room() {
  f=$1
  set -- $(bytes "$f" 510 2)
  [ "$1 $2" = "85 170" ] || fail WRITE_ERROR "config drive: the image has no MBR partition table to add its partition to"
  USED=0 SLOT=
  for i in 0 1 2 3; do
    e=$((446 + 16 * i))
    type=$(bytes "$f" $((e + 4)) | tr -d ' ')
    [ "$type" = 238 ] && fail WRITE_ERROR "config drive: the image has a GPT partition table (only MBR is done)"
    if [ "$type" = 0 ]; then
      [ -z "$SLOT" ] && SLOT=$i
      continue
    fi
    end=$(($(le32 "$f" $((e + 8))) + $(le32 "$f" $((e + 12)))))
    [ "$end" -gt "$USED" ] && USED=$end
  done
  [ -n "$SLOT" ] || fail WRITE_ERROR "config drive: the image's MBR has no free partition slot"
}
# octal N...: printf escapes for these byte values.
octal() { for b in "$@"; do printf '\\%03o' "$b"; done; }

# The config drive goes in a new primary partition at the end of the disk, after the image (as Ironic's
# agent does): the drive's sectors written with dd at the last MiB-aligned place it fits, then a
# partition entry (type 0x0c, as Ironic's parted fat32) in a free slot of the image's MBR.
write_config_drive() {
  size=$(wc -c < "$DRIVE")
  need=$(((size + 511) / 512))
  disk_sectors=$(cat "$SYS_BLOCK/$DISK/size")
  image_sectors=$((($(wc -c < "$IMAGE") + 511) / 512))
  [ "$FORMAT" = QCOW2 ] && image_sectors=$((($(qemu-img info "$IMAGE" | sed -n 's/^virtual size: .*(\([0-9]*\) bytes).*/\1/p') + 511) / 512))
  mbr_room "$DEV/$DISK"
  slot=$SLOT used=$USED
  [ "$image_sectors" -gt "$used" ] && used=$image_sectors
  start=$(((disk_sectors - need) / 2048 * 2048))
  [ "$start" -ge "$used" ] || fail WRITE_ERROR "config drive: no room on $DEV/$DISK ($disk_sectors sectors, $used used, $need needed)"
  [ "$start" -lt 4294967296 ] || fail WRITE_ERROR "config drive: $DEV/$DISK is too large for an MBR partition at its end"
  step WRITING "config drive: partition $((slot + 1)) of $DEV/$DISK at sector $start"
  dd if="$DRIVE" of="$DEV/$DISK" bs=512 seek="$start" conv=notrunc,fsync 2>"$TMP/bootorch-write.err" ||
    fail WRITE_ERROR "config drive to $DEV/$DISK: $(tail -c 150 "$TMP/bootorch-write.err")"
  # The entry: not bootable, CHS "use LBA", type 0x0c, CHS "use LBA", first sector, sector count.
  entry="$(octal 0 254 255 255 12 254 255 255)"
  for v in "$start" "$need"; do
    entry="$entry$(octal $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)))"
  done
  printf "$entry" | dd of="$DEV/$DISK" bs=1 seek=$((446 + 16 * slot)) count=16 conv=notrunc,fsync 2>"$TMP/bootorch-write.err" ||
    fail WRITE_ERROR "config drive partition entry on $DEV/$DISK: $(tail -c 150 "$TMP/bootorch-write.err")"
  sync
  NOTE=" + config drive cidata on partition $((slot + 1)) at sector $start"
}

if [ "$1" = active ]; then
  n=0
  # Until accepted: bootorch may not have recorded the switch to disk yet when a fast disk boot reports.
  while [ $n -lt 30 ]; do
    n=$((n + 1))
    heartbeat ACTIVE "" "installed system up" && { log "$XNAME active (attempt $n)"; exit 0; }
    sleep 2
  done
  exit 3
fi

heartbeat STARTING || exit 3
IMAGE_URL=$(field imageUrl); FORMAT=$(field imageFormat); SUM=$(field imageChecksum)
HINT_SIZE=$(field rootDeviceSize); HINT_NAME=$(field rootDeviceName); HINT_SERIAL=$(field rootDeviceSerial)
INTERVAL=$(field heartbeatIntervalSeconds); [ -z "$INTERVAL" ] && INTERVAL=30
HAS_CONFIG_DRIVE=$(field hasConfigDrive)
echo STARTING > "$STATE_FILE"
# A path under bootorch's boot files folder, relative to where bootorch is.
case "$IMAGE_URL" in http://* | https://*) ;; *) IMAGE_URL="${URL%/graphql}/boot/v1/files/$IMAGE_URL" ;; esac
log "image $IMAGE_URL ($FORMAT, $SUM); hints size=$HINT_SIZE name=$HINT_NAME serial=$HINT_SERIAL"

# The keeper re-sends the current state, so a long download is not taken for a dead agent.
# Its output goes nowhere: it must not hold the agent's stdout open after the agent ends.
( while sleep "$INTERVAL"; do heartbeat "$(cat "$STATE_FILE")"; done ) >/dev/null 2>&1 </dev/null &
KEEPER=$!

# The root device: the first disk (by name) that meets every hint given.
DISK=
for d in $(ls "$SYS_BLOCK"); do
  case "$d" in loop* | ram* | sr* | fd* | zram* | dm-*) continue ;; esac
  sectors=$(cat "$SYS_BLOCK/$d/size" 2>/dev/null || echo 0)
  gib=$((sectors * 512 / 1073741824))
  serial=$(cat "$SYS_BLOCK/$d/serial" 2>/dev/null || cat "$SYS_BLOCK/$d/device/serial" 2>/dev/null)
  [ "$sectors" -gt 0 ] || continue
  [ -n "$HINT_NAME" ] && [ "$HINT_NAME" != "$d" ] && continue
  [ -n "$HINT_SIZE" ] && [ "$HINT_SIZE" != "$gib" ] && continue
  [ -n "$HINT_SERIAL" ] && [ "$HINT_SERIAL" != "$serial" ] && continue
  DISK=$d; break
done
[ -z "$DISK" ] && fail NO_MATCHING_DISK "no disk in $SYS_BLOCK meets size=$HINT_SIZE name=$HINT_NAME serial=$HINT_SERIAL"

step DOWNLOADING "$IMAGE_URL"
IMAGE=$TMP/bootorch-image
rm -f "$IMAGE"
if command -v curl >/dev/null 2>&1; then
  curl -fsS -o "$IMAGE" "$IMAGE_URL" 2>"$TMP/bootorch-download.err"
else
  wget -q -O "$IMAGE" "$IMAGE_URL" 2>"$TMP/bootorch-download.err"
fi || fail IMAGE_UNREACHABLE "$IMAGE_URL: $(head -c 150 "$TMP/bootorch-download.err")"

step VERIFYING
GOT="sha256:$(sha256sum "$IMAGE" | cut -d' ' -f1)"
[ "$GOT" = "$SUM" ] || fail CHECKSUM_MISMATCH "got $GOT"

# The config drive (bootorch builds it: a FAT filesystem labelled cidata), fetched before the disk is
# touched, so a drive bootorch cannot give fails the deploy with the disk as it was.
DRIVE=$TMP/bootorch-config-drive
if [ "$HAS_CONFIG_DRIVE" = true ]; then
  DRIVE_URL="${URL%/graphql}/boot/v1/config-drive/$XNAME"
  rm -f "$DRIVE"
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -m 60 -H "Authorization: Bearer $TOKEN" -o "$DRIVE" "$DRIVE_URL" 2>"$TMP/bootorch-drive.err"
  else
    timeout 60 wget -q -O "$DRIVE" --header "Authorization: Bearer $TOKEN" "$DRIVE_URL" 2>"$TMP/bootorch-drive.err"
  fi || fail WRITE_ERROR "config drive not given by $DRIVE_URL: $(head -c 150 "$TMP/bootorch-drive.err")"
  [ -s "$DRIVE" ] || fail WRITE_ERROR "config drive from $DRIVE_URL is empty"
  # A raw image that has no room for the drive's partition fails here, before the disk is written (a
  # qcow2 one is checked once converted to the disk).
  [ "$FORMAT" != QCOW2 ] && mbr_room "$IMAGE"
fi

step WRITING "$DEV/$DISK"
if [ "$FORMAT" = QCOW2 ]; then
  command -v qemu-img >/dev/null 2>&1 || fail WRITE_ERROR "a qcow2 image needs qemu-img in the deploy ramdisk"
  qemu-img convert -O raw "$IMAGE" "$DEV/$DISK" 2>"$TMP/bootorch-write.err"
else
  dd if="$IMAGE" of="$DEV/$DISK" bs=1M conv=fsync 2>"$TMP/bootorch-write.err"
fi || fail WRITE_ERROR "$DEV/$DISK: $(tail -c 150 "$TMP/bootorch-write.err")"
sync
NOTE=
[ "$HAS_CONFIG_DRIVE" = true ] && write_config_drive
kill "$KEEPER" 2>/dev/null
heartbeat WRITTEN "" "$(wc -c < "$IMAGE") bytes to $DEV/$DISK$NOTE" || exit 3
log "written to $DEV/$DISK; bootorch switches the node to its disk"
exit 0

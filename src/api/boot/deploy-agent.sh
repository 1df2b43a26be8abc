#!/bin/sh
# bootorch deploy agent: writes a disk image to this node's disk, as Ironic's agent does. Runs from
# the deploy ramdisk (its init starts it when the kernel command line holds bootorch_deploy=1); needs
# a POSIX shell and busybox (wget, sha256sum, dd) or curl. Served by bootorch at
# /boot/v1/deploy-agent.sh.
#
# Protocol (docs/boot-credentials.md, docs/disk-deploys.md): the agent first trades the one-time ticket its boot script carried
# (bootorch_ticket=) for its credential (POST /boot/v1/exchange); that credential may only heartbeat
# this node's deploy and read its config drive, and ends at WRITTEN. Every step is a `deployHeartbeat`
# GraphQL mutation with it. The first (STARTING) is the lookup: its answer carries the image URL,
# format, sha256 and the root device hints and hasConfigDrive. Then DOWNLOADING, VERIFYING, WRITING,
# WRITTEN (with the sha256 of what it wrote: read back from the disk for a raw image, the verified
# file for a qcow2 one), or FAILED with a reason (CHECKSUM_MISMATCH, NO_MATCHING_DISK, WRITE_ERROR,
# IMAGE_UNREACHABLE). After verifying the image it fetches the config drive (GET
# /boot/v1/config-drive/<xname>, same credential), writes the image, then the drive at the end of the
# disk in a new MBR partition, heartbeating WRITING again with "config drive: ..." as its message. The
# drive carries the installed system's own ticket, so every deploy gets one; when the boot set asked
# for one (hasConfigDrive) any failure there is WRITE_ERROR, else an image with no room for it is
# written without it (the installed system then needs a provisioned credential). While a step runs,
# the current state is re-sent every heartbeatIntervalSeconds; bootorch fails a node whose agent goes
# silent. After WRITTEN bootorch sets the boot device to disk and power-cycles the node.
# `deploy-agent.sh active`, run by the installed system once its network is up, is its first report
# (ACTIVE): it exchanges the ticket in the file bootorch-ticket of its config drive (the partition
# labelled cidata, or BOOTORCH_CIDATA) for its own credential, taken only once bootorch switched the
# node to its disk.
#
# Reads xname=, bootorch_url=, bootorch_ticket= from the kernel command line; the URL may also be in
# /etc/bootorch/url, and an image with a provisioned credential (`bootorch token node`) may hold it in
# /etc/bootorch/token, used when there is no ticket or it is refused.
# For tests: BOOTORCH_CMDLINE, BOOTORCH_SYS_BLOCK (/sys/block), BOOTORCH_DEV (/dev), BOOTORCH_TMP (/tmp),
# BOOTORCH_CIDATA (the config drive's device or image), BOOTORCH_ETC (/etc/bootorch).
# Exit 0 once written, 1 on a failure bootorch was told about, 2 when a value is missing, 3 when
# bootorch refused or could not be reached.
CMDLINE=${BOOTORCH_CMDLINE:-/proc/cmdline}
SYS_BLOCK=${BOOTORCH_SYS_BLOCK:-/sys/block}
DEV=${BOOTORCH_DEV:-/dev}
TMP=${BOOTORCH_TMP:-/tmp}
ETC=${BOOTORCH_ETC:-/etc/bootorch}
XNAME=; URL=; TICKET=; TOKEN=
for arg in $(cat "$CMDLINE"); do
  case "$arg" in
    xname=*) XNAME=${arg#*=} ;;
    bootorch_url=*) URL=${arg#*=} ;;
    bootorch_ticket=*) TICKET=${arg#*=} ;;
  esac
done
[ -z "$URL" ] && [ -r "$ETC/url" ] && URL=$(cat "$ETC/url")
for v in XNAME URL; do
  eval "val=\$$v"
  if [ -z "$val" ]; then echo "bootorch-deploy: no $v on the kernel command line" >&2; exit 2; fi
done
log() { echo "bootorch-deploy: $*" >&2; }

# exchange TICKET: trades a one-time boot ticket for this node's credential (POST /boot/v1/exchange),
# into TOKEN. 1 when refused: a 401 is never retried (bootorch takes a ticket once), a 409 (not yet:
# the installed system before bootorch switched to disk) is; 2 when bootorch could not be reached.
exchange() {
  n=0
  while [ $n -lt 30 ]; do
    n=$((n + 1))
    if command -v curl >/dev/null 2>&1; then
      out=$(curl -sS -m 10 -X POST -w ' HTTP/%{http_code}' -H "Authorization: Bearer $1" "${URL%/graphql}/boot/v1/exchange" 2>&1)
    else
      out=$(timeout 10 wget -q -O - --header "Authorization: Bearer $1" --post-data '' "${URL%/graphql}/boot/v1/exchange" 2>&1)
    fi
    TOKEN=$(echo "$out" | grep -oE 'bto_[0-9a-f]{16}_[A-Za-z0-9_-]{43}' | head -n 1)
    [ -n "$TOKEN" ] && return 0
    case "$out" in *401*) log "boot ticket refused: $(echo "$out" | head -c 200)"; return 1 ;; esac
    log "exchange not done (attempt $n): $(echo "$out" | head -c 200)"
    sleep $((n < 5 ? 2 * n : 10))
  done
  return 2
}
# credential [TICKET]: TOKEN from the ticket, else the provisioned one; exit 2 without either.
credential() {
  [ -n "$1" ] && exchange "$1" && return 0
  [ -r "$ETC/token" ] && TOKEN=$(cat "$ETC/token")
  [ -n "$TOKEN" ] && return 0
  log "no credential: no usable bootorch_ticket and no $ETC/token"
  exit 2
}

post() {
  if command -v curl >/dev/null 2>&1; then
    curl -sS -m 20 -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" -d "$1" "$URL"
  else
    # busybox wget: no -T (Debian's busybox 1.35 crashes on it), so timeout bounds the call.
    timeout 20 wget -q -O - --header 'Content-Type: application/json' --header "Authorization: Bearer $TOKEN" \
      --post-data "$1" "$URL"
  fi
}

# heartbeat STATE [REASON] [MESSAGE] [CHECKSUM]: retried for a while; the answer is left in $ANSWER.
# Messages go into JSON as they are, so they are kept to characters that need no escaping.
heartbeat() {
  reason=null; [ -n "$2" ] && reason="\"$2\""
  sum=null; [ -n "$4" ] && sum="\"$4\""
  msg=$(printf '%s' "$3" | tr -cd 'A-Za-z0-9 ._:/=+-' | head -c 300)
  body='{"query":"mutation($id: ID!, $s: DeployHeartbeatState!, $r: DeployFailure, $m: String, $c: String) { deployHeartbeat(id: $id, state: $s, reason: $r, message: $m, checksum: $c) { __typename ... on DeployHeartbeatAccepted { imageUrl imageFormat imageChecksum rootDeviceSize rootDeviceName rootDeviceSerial hasConfigDrive heartbeatIntervalSeconds } ... on ReportRefused { code message } } }","variables":{"id":"'"$XNAME"'","s":"'"$1"'","r":'"$reason"',"m":"'"$msg"'","c":'"$sum"'}}'
  n=0
  while [ $n -lt 10 ]; do
    n=$((n + 1))
    ANSWER=$(post "$body" 2>&1)
    case "$ANSWER" in
      *DeployHeartbeatAccepted*) return 0 ;;
      *ReportRefused* | *FORBIDDEN* | *UNAUTHENTICATED*) log "$1 refused: $ANSWER"; return 1 ;;
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
# partition, sectors), or returns 1 with WHY.
mbr_room() {
  f=$1
  set -- $(bytes "$f" 510 2)
  [ "$1 $2" = "85 170" ] || { WHY="config drive: the image has no MBR partition table to add its partition to"; return 1; }
  USED=0 SLOT=
  for i in 0 1 2 3; do
    e=$((446 + 16 * i))
    type=$(bytes "$f" $((e + 4)) | tr -d ' ')
    [ "$type" = 238 ] && { WHY="config drive: the image has a GPT partition table (only MBR is done)"; return 1; }
    if [ "$type" = 0 ]; then
      [ -z "$SLOT" ] && SLOT=$i
      continue
    fi
    end=$(($(le32 "$f" $((e + 8))) + $(le32 "$f" $((e + 12)))))
    [ "$end" -gt "$USED" ] && USED=$end
  done
  [ -n "$SLOT" ] || { WHY="config drive: the image's MBR has no free partition slot"; return 1; }
}
# skip_drive WHY: a drive the boot set asked for fails the deploy (WRITE_ERROR); bootorch's own (the
# installed system's ticket only) is left out, saying why.
skip_drive() {
  [ "$HAS_CONFIG_DRIVE" = true ] && fail WRITE_ERROR "$1"
  log "written without a config drive: $1 (the installed system needs a provisioned credential to report)"
  USE_DRIVE=
  NOTE=" (no config drive: $1)"
  return 1
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
  mbr_room "$DEV/$DISK" || { skip_drive "$WHY"; return; }
  slot=$SLOT used=$USED
  [ "$image_sectors" -gt "$used" ] && used=$image_sectors
  start=$(((disk_sectors - need) / 2048 * 2048))
  [ "$start" -ge "$used" ] || { skip_drive "config drive: no room on $DEV/$DISK ($disk_sectors sectors, $used used, $need needed)"; return; }
  [ "$start" -lt 4294967296 ] || { skip_drive "config drive: $DEV/$DISK is too large for an MBR partition at its end"; return; }
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

# disk_ticket: the installed system's ticket, from the file bootorch-ticket of its config drive: the
# partition labelled cidata, else any partition of 64 MiB or less. The drive is read as raw bytes (a FAT
# file's bytes lie on it as they are), so no mount is needed.
disk_ticket() {
  small=$(for p in "$SYS_BLOCK"/*/*/partition; do
    d=${p%/partition}
    [ "$(cat "$d/size" 2>/dev/null || echo 0)" -le 131072 ] && echo "$DEV/${d##*/}"
  done 2>/dev/null)
  for dev in ${BOOTORCH_CIDATA:-$(findfs LABEL=cidata 2>/dev/null || findfs LABEL=CIDATA 2>/dev/null) $small}; do
    [ -r "$dev" ] || continue
    dd if="$dev" bs=65536 count=64 2>/dev/null | tr -c 'A-Za-z0-9_-' '\n' | grep -m 1 -E '^btk_[A-Za-z0-9_-]{43}$' && return 0
  done
  return 1
}

if [ "$1" = active ]; then
  credential "$(disk_ticket)"
  n=0
  # Until accepted: bootorch may not have recorded the switch to disk yet when a fast disk boot reports.
  while [ $n -lt 30 ]; do
    n=$((n + 1))
    heartbeat ACTIVE "" "installed system up" && { log "$XNAME active (attempt $n)"; exit 0; }
    sleep 2
  done
  exit 3
fi

credential "$TICKET"
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
# touched, so a drive the boot set asked for and bootorch cannot give fails the deploy with the disk as
# it was.
DRIVE=$TMP/bootorch-config-drive
DRIVE_URL="${URL%/graphql}/boot/v1/config-drive/$XNAME"
USE_DRIVE=1 NOTE=
rm -f "$DRIVE"
if command -v curl >/dev/null 2>&1; then
  # --compressed: gzip on the wire (a few KiB instead of a mostly empty 64 KiB), written decoded.
  curl -fsS -m 60 --compressed -H "Authorization: Bearer $TOKEN" -o "$DRIVE" "$DRIVE_URL" 2>"$TMP/bootorch-drive.err"
else
  timeout 60 wget -q -O "$DRIVE" --header "Authorization: Bearer $TOKEN" "$DRIVE_URL" 2>"$TMP/bootorch-drive.err"
fi || skip_drive "config drive not given by $DRIVE_URL: $(head -c 150 "$TMP/bootorch-drive.err")"
[ -n "$USE_DRIVE" ] && [ ! -s "$DRIVE" ] && skip_drive "config drive from $DRIVE_URL is empty"
# A raw image that has no room for the drive's partition is found here, before the disk is written (a
# qcow2 one is checked once converted to the disk).
[ -n "$USE_DRIVE" ] && [ "$FORMAT" != QCOW2 ] && { mbr_room "$IMAGE" || skip_drive "$WHY"; }

step WRITING "$DEV/$DISK"
if [ "$FORMAT" = QCOW2 ]; then
  command -v qemu-img >/dev/null 2>&1 || fail WRITE_ERROR "a qcow2 image needs qemu-img in the deploy ramdisk"
  qemu-img convert -O raw "$IMAGE" "$DEV/$DISK" 2>"$TMP/bootorch-write.err"
else
  dd if="$IMAGE" of="$DEV/$DISK" bs=1M conv=fsync 2>"$TMP/bootorch-write.err"
fi || fail WRITE_ERROR "$DEV/$DISK: $(tail -c 150 "$TMP/bootorch-write.err")"
sync
# What was written, as bootorch checks it: a raw image read back from the disk (before the drive's
# partition entry changes its MBR), a qcow2 one (converted on the way) as the verified file.
WROTE=$GOT
[ "$FORMAT" != QCOW2 ] && WROTE="sha256:$(head -c "$(wc -c < "$IMAGE")" "$DEV/$DISK" | sha256sum | cut -d' ' -f1)"
[ -n "$USE_DRIVE" ] && write_config_drive
kill "$KEEPER" 2>/dev/null
heartbeat WRITTEN "" "$(wc -c < "$IMAGE") bytes to $DEV/$DISK$NOTE" "$WROTE" || exit 3
log "written to $DEV/$DISK; bootorch switches the node to its disk"
exit 0

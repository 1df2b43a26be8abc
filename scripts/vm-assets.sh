#!/bin/sh
# Builds what the VM test boots (../shared/reference/real-nodes.md): a Debian cloud kernel taken from
# its package (apt-get download + dpkg-deb -x, never installed) and a busybox initrd whose init brings
# up virtio-net, takes a DHCP lease and runs bootorch's node reporter (src/api/boot/reporter.sh), or,
# when the kernel command line says so, the disk deploy agent (src/api/boot/deploy-agent.sh:
# bootorch_deploy=1) or the installed system's first report (bootorch_installed=1, the same initrd
# booted from a deployed disk).
#
#   scripts/vm-assets.sh [DIR]      DIR defaults to $BOOTORCH_VM_ASSETS, else .cache/vm-assets
#
# Needs apt-get, dpkg-deb, gzip, busybox-static and qemu-utils (qemu-img, carried in the ramdisk for
# qcow2 deploys); the VM test (test/vm) also needs QEMU, iPXE's ROMs,
# OpenIPMI's ipmi_sim and ipmitool, so on Debian 12:
#   apt-get install -y --no-install-recommends qemu-system-x86 ipxe-qemu openipmi ipmitool busybox-static
# The kernel is downloaded once (cached in DIR); the initrd is rebuilt on every run (0.5 s), so it
# always carries the current reporter. Prints DIR.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-${BOOTORCH_VM_ASSETS:-$ROOT/.cache/vm-assets}}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || { echo "vm-assets: busybox not found (apt-get install busybox-static)" >&2; exit 1; }

MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net virtio_blk button evdev"
if [ ! -s "$DIR/vmlinuz" ] || [ ! -e "$DIR/modules/virtio_blk.ko" ]; then
  # The versioned package the cloud meta-package points at, e.g. linux-image-6.1.0-57-cloud-amd64.
  PKG=$(apt-cache depends linux-image-cloud-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p' | head -n 1)
  [ -n "$PKG" ] || { echo "vm-assets: cannot resolve linux-image-cloud-amd64 (run apt-get update)" >&2; exit 1; }
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  (cd "$WORK" && apt-get download "$PKG" >/dev/null && dpkg-deb -x "$PKG"_*.deb root)
  KVER=${PKG#linux-image-}
  cp "$WORK/root/boot/vmlinuz-$KVER" "$DIR/vmlinuz.tmp"
  rm -rf "$DIR/modules" && mkdir -p "$DIR/modules"
  # virtio is all modules in the cloud kernel, and so is the ACPI power button (real-nodes §1).
  for m in $MODULES; do
    f=$(find "$WORK/root/lib/modules/$KVER" -name "$m.ko*" | head -n 1)
    [ -n "$f" ] || { echo "vm-assets: module $m not in $PKG" >&2; exit 1; }
    cp "$f" "$DIR/modules/"
  done
  mv "$DIR/vmlinuz.tmp" "$DIR/vmlinuz"
fi

I=$(mktemp -d)
mkdir -p "$I/bin" "$I/sbin" "$I/lib/modules" "$I/proc" "$I/sys" "$I/dev" "$I/tmp" "$I/etc/acpi/PWRF" "$I/usr/share/udhcpc"
cp "$BUSYBOX" "$I/bin/busybox"
ln -s busybox "$I/bin/sh"          # without it: "No working init found" (real-nodes F1)
cp "$DIR"/modules/* "$I/lib/modules/"
cp "$ROOT/src/api/boot/reporter.sh" "$I/bin/bootorch-report"
cp "$ROOT/src/api/boot/deploy-agent.sh" "$I/bin/bootorch-deploy"
# qcow2 images: the deploy agent converts them to the disk with qemu-img, as Ironic's agent does; the
# ramdisk carries it with the libraries ldd names, at their own paths (Debian: qemu-utils).
QEMU_IMG=$(command -v qemu-img || true)
[ -n "$QEMU_IMG" ] || { echo "vm-assets: qemu-img not found (apt-get install qemu-utils)" >&2; exit 1; }
cp "$QEMU_IMG" "$I/bin/qemu-img"
for lib in $(ldd "$QEMU_IMG" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
  mkdir -p "$I$(dirname "$lib")"
  cp -L "$lib" "$I$lib"
done
cat > "$I/usr/share/udhcpc/default.script" <<'S'
#!/bin/sh
case "$1" in
  deconfig) ip link set "$interface" up; ip addr flush dev "$interface" ;;
  bound|renew)
    ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}" up
    for r in $router; do ip route add default via "$r" dev "$interface"; break; done ;;
esac
S
cat > "$I/etc/acpi/PWRF/00000080" <<'S'
#!/bin/sh
echo "node: ACPI power button -> poweroff" > /dev/console
sync
poweroff -f
S
cat > "$I/init" <<'S'
#!/bin/sh
export PATH=/bin:/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo "node: init at $(cut -d' ' -f1 /proc/uptime)s"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net virtio_blk button evdev; do
  insmod /lib/modules/$m.ko 2>/dev/null
done
acpid -c /etc/acpi -l /tmp/acpid.log
ip link set lo up
n=0; while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
udhcpc -i eth0 -s /usr/share/udhcpc/default.script -q -f -n -t 20 -T 1
case " $(cat /proc/cmdline) " in
  *" bootorch_deploy=1 "*) /bin/bootorch-deploy; echo "node: deploy agent exited $? at $(cut -d' ' -f1 /proc/uptime)s" ;;
  *" bootorch_installed=1 "*) /bin/bootorch-deploy active; echo "node: installed system reported ($?) at $(cut -d' ' -f1 /proc/uptime)s" ;;
  # A rescue image (docs/rescue.md) says so with its command line (the VM test reads its spent ticket there), then reports.
  *" bootorch_rescue=1 "*) echo "node: rescue image: $(cat /proc/cmdline)"; BOOTORCH_REPORT_ATTEMPTS=30 /bin/bootorch-report; echo "node: reporter exited $? at $(cut -d' ' -f1 /proc/uptime)s" ;;
  *) BOOTORCH_REPORT_ATTEMPTS=30 /bin/bootorch-report; echo "node: reporter exited $? at $(cut -d' ' -f1 /proc/uptime)s" ;;
esac
while :; do sleep 3600; done
S
chmod 755 "$I/init" "$I/bin/bootorch-report" "$I/bin/bootorch-deploy" "$I/usr/share/udhcpc/default.script" "$I/etc/acpi/PWRF/00000080"
(cd "$I" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -9) > "$DIR/initrd.gz.tmp"
mv "$DIR/initrd.gz.tmp" "$DIR/initrd.gz"
rm -rf "$I"
echo "$DIR"

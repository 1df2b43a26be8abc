#!/bin/sh
# bootorch node reporter: tells bootorch which boot this node runs (its referral token), so bootorch
# can tell the node booted the artifacts it was given. Needs nothing but a POSIX shell and busybox
# (wget) or curl. Served by bootorch at /boot/v1/reporter.sh; put it in the image and run it once
# the network is up.
#
# Reads from the kernel command line (the boot script bootorch serves writes all four):
#   xname=               the node's name in bootorch
#   bss_referral_token=  this boot's referral token
#   bootorch_url=        bootorch's GraphQL URL
#   bootorch_token=      a credential that may report for this node only (role node)
# or, for the URL and the credential, the files /etc/bootorch/url and /etc/bootorch/token.
# Tries until bootorch accepts the report (BOOTORCH_REPORT_ATTEMPTS, default 0 = forever), waiting
# min(2n, 30) s before attempt n+1. Exit 0 once accepted, 1 when the attempts ran out, 2 when a
# value is missing.
CMDLINE=${BOOTORCH_CMDLINE:-/proc/cmdline}
ATTEMPTS=${BOOTORCH_REPORT_ATTEMPTS:-0}
XNAME=; REF=; URL=; TOKEN=
for arg in $(cat "$CMDLINE"); do
  case "$arg" in
    xname=*) XNAME=${arg#*=} ;;
    bss_referral_token=*) REF=${arg#*=} ;;
    bootorch_url=*) URL=${arg#*=} ;;
    bootorch_token=*) TOKEN=${arg#*=} ;;
  esac
done
[ -z "$URL" ] && [ -r /etc/bootorch/url ] && URL=$(cat /etc/bootorch/url)
[ -z "$TOKEN" ] && [ -r /etc/bootorch/token ] && TOKEN=$(cat /etc/bootorch/token)
for v in XNAME REF URL TOKEN; do
  eval "val=\$$v"
  if [ -z "$val" ]; then echo "bootorch-report: no $v (see the comment at the top of $0)" >&2; exit 2; fi
done
# Values go into JSON as they are: xnames and tokens hold no quotes or backslashes.
BODY='{"query":"mutation($id: ID!, $t: String!) { reportBootState(id: $id, bssToken: $t) { __typename ... on ReportRefused { code message } } }","variables":{"id":"'"$XNAME"'","t":"'"$REF"'"}}'

post() {
  if command -v curl >/dev/null 2>&1; then
    curl -sS -m 10 -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" -d "$BODY" "$URL"
  else
    # busybox wget: no -T (Debian's busybox 1.35 crashes on it), so timeout bounds the call.
    timeout 10 wget -q -O - --header 'Content-Type: application/json' --header "Authorization: Bearer $TOKEN" \
      --post-data "$BODY" "$URL"
  fi
}

n=0
while :; do
  n=$((n + 1))
  answer=$(post 2>&1)
  case "$answer" in
    *BootStateReported*) echo "bootorch-report: $XNAME reported (attempt $n)"; exit 0 ;;
  esac
  echo "bootorch-report: attempt $n not accepted: $(echo "$answer" | head -c 300)" >&2
  if [ "$ATTEMPTS" -gt 0 ] && [ "$n" -ge "$ATTEMPTS" ]; then exit 1; fi
  wait=$((2 * n)); [ "$wait" -gt 30 ] && wait=30
  sleep "$wait"
done

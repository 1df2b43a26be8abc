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
#   bootorch_ticket=     a one-time ticket, traded first (POST /boot/v1/exchange) for a credential that
#                        may report for this node only; bootorch takes it once, so it is never retried
#                        after a refusal
# or, for the URL, the file /etc/bootorch/url; an image with a provisioned credential (`bootorch token
# node`) may hold it in /etc/bootorch/token, used when there is no ticket or it is refused.
# Tries until bootorch accepts the report (BOOTORCH_REPORT_ATTEMPTS, default 0 = forever), waiting
# min(2n, 30) s before attempt n+1. Exit 0 once accepted, 1 when the attempts ran out, 2 when a
# value is missing. For tests: BOOTORCH_CMDLINE, BOOTORCH_ETC (/etc/bootorch).
CMDLINE=${BOOTORCH_CMDLINE:-/proc/cmdline}
ETC=${BOOTORCH_ETC:-/etc/bootorch}
ATTEMPTS=${BOOTORCH_REPORT_ATTEMPTS:-0}
XNAME=; REF=; URL=; TICKET=; TOKEN=
for arg in $(cat "$CMDLINE"); do
  case "$arg" in
    xname=*) XNAME=${arg#*=} ;;
    bss_referral_token=*) REF=${arg#*=} ;;
    bootorch_url=*) URL=${arg#*=} ;;
    bootorch_ticket=*) TICKET=${arg#*=} ;;
  esac
done
[ -z "$URL" ] && [ -r "$ETC/url" ] && URL=$(cat "$ETC/url")

# exchange TICKET: the credential into TOKEN (as in deploy-agent.sh). A 401 ends it (a second try would
# be a second exchange); no answer is retried.
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
    echo "bootorch-report: exchange not done (attempt $n): $(echo "$out" | head -c 200)" >&2
    case "$out" in *401*) return 1 ;; esac
    sleep $((n < 5 ? 2 * n : 10))
  done
  return 1
}
[ -n "$TICKET" ] && [ -n "$URL" ] && exchange "$TICKET"
[ -z "$TOKEN" ] && [ -r "$ETC/token" ] && TOKEN=$(cat "$ETC/token")
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

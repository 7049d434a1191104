#!/bin/sh
# llmhost.vllm.gateway: nginx -t of a candidate gateway configuration ($1), inside a minimal nginx.conf with the
# distribution's modules, so that the live configuration is untouched until the candidate passes.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/nginx.conf" <<EOF
include /etc/nginx/modules-enabled/*.conf;
pid $dir/nginx.pid;
error_log stderr;
events {}
http {
    include /etc/nginx/mime.types;
    include $1;
}
EOF
exec nginx -t -q -c "$dir/nginx.conf"

{{/* The release's full name, within the 63 characters of a Kubernetes name. */}}
{{- define "bootorch.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "bootorch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (api, worker, migration). */}}
{{- define "bootorch.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "bootorch.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "bootorch.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{ .Values.serviceAccount.name | default (include "bootorch.fullname" .) }}
{{- else -}}
{{ .Values.serviceAccount.name | default "default" }}
{{- end -}}
{{- end -}}

{{/* The Secret that holds one of .Values.secrets: the existing one named, else the chart's own. */}}
{{- define "bootorch.secretName" -}}
{{- .secret.existingSecret | default (include "bootorch.fullname" .root) -}}
{{- end -}}

{{/* Whether one of .Values.secrets is set at all (an existing Secret or a value). */}}
{{- define "bootorch.secretSet" -}}
{{- if or .existingSecret .value -}}true{{- end -}}
{{- end -}}

{{/* The environment both roles and the migration share. */}}
{{- define "bootorch.env" -}}
{{- $s := .Values.secrets -}}
{{- if not (include "bootorch.secretSet" $s.databaseUrl) }}
{{- fail "secrets.databaseUrl: name an existingSecret (and key) or give a value: bootorch needs its PostgreSQL" }}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "bootorch.secretName" (dict "secret" $s.databaseUrl "root" .) }}
      key: {{ $s.databaseUrl.key }}
- name: BOOTORCH_ADAPTERS
  value: {{ .Values.adapters | quote }}
{{- if eq .Values.adapters "http" }}
{{- with .Values.csm }}
- name: HSM_URL
  value: {{ .hsmUrl | quote }}
- name: PCS_URL
  value: {{ .pcsUrl | quote }}
- name: BSS_URL
  value: {{ .bssUrl | quote }}
- name: CFS_URL
  value: {{ .cfsUrl | quote }}
{{- if .s3Url }}
- name: S3_URL
  value: {{ .s3Url | quote }}
{{- end }}
{{- if .caConfigMap }}
- name: CSM_CA_FILE
  value: /etc/bootorch/csm-ca/ca.crt
{{- end }}
{{- end }}
{{- if include "bootorch.secretSet" $s.csmToken }}
- name: CSM_TOKEN_FILE
  value: /etc/bootorch/csm-token/{{ $s.csmToken.key }}
{{- end }}
{{- end }}
{{- if include "bootorch.secretSet" $s.sealingKey }}
- name: BOOTORCH_SECRET_KEY_FILE
  value: /etc/bootorch/sealing-key/{{ $s.sealingKey.key }}
{{- end }}
- name: BOOTORCH_AUTH_MODE
  value: {{ .Values.auth.mode | quote }}
{{- with .Values.auth.oidc }}
{{- range $name, $v := dict "OIDC_ISSUER" .issuer "OIDC_AUDIENCE" .audience "OIDC_JWKS_URL" .jwksUrl "OIDC_ROLE_CLAIM" .roleClaim "OIDC_ROLE_MAP" .roleMap }}
{{- if $v }}
- name: {{ $name }}
  value: {{ $v | quote }}
{{- end }}
{{- end }}
{{- end }}
# Nothing is written outside /tmp (an emptyDir): the root file system is read-only.
- name: BOOTORCH_DATA_DIR
  value: /tmp/bootorch
{{- range $name, $v := .Values.env }}
- name: {{ $name }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* Volumes for the secret files, the CA bundle and /tmp; and where they are mounted. */}}
{{- define "bootorch.volumes" -}}
{{- $s := .Values.secrets -}}
- name: tmp
  emptyDir: {}
{{- if and (eq .Values.adapters "http") (include "bootorch.secretSet" $s.csmToken) }}
- name: csm-token
  secret:
    secretName: {{ include "bootorch.secretName" (dict "secret" $s.csmToken "root" .) }}
    items: [{ key: {{ $s.csmToken.key }}, path: {{ $s.csmToken.key }} }]
{{- end }}
{{- if include "bootorch.secretSet" $s.sealingKey }}
- name: sealing-key
  secret:
    secretName: {{ include "bootorch.secretName" (dict "secret" $s.sealingKey "root" .) }}
    items: [{ key: {{ $s.sealingKey.key }}, path: {{ $s.sealingKey.key }} }]
{{- end }}
{{- if and (eq .Values.adapters "http") .Values.csm.caConfigMap }}
- name: csm-ca
  configMap:
    name: {{ .Values.csm.caConfigMap }}
{{- end }}
{{- end -}}

{{- define "bootorch.volumeMounts" -}}
{{- $s := .Values.secrets -}}
- name: tmp
  mountPath: /tmp
{{- if and (eq .Values.adapters "http") (include "bootorch.secretSet" $s.csmToken) }}
- name: csm-token
  mountPath: /etc/bootorch/csm-token
  readOnly: true
{{- end }}
{{- if include "bootorch.secretSet" $s.sealingKey }}
- name: sealing-key
  mountPath: /etc/bootorch/sealing-key
  readOnly: true
{{- end }}
{{- if and (eq .Values.adapters "http") .Values.csm.caConfigMap }}
- name: csm-ca
  mountPath: /etc/bootorch/csm-ca
  readOnly: true
{{- end }}
{{- end -}}

{{/* Egress rule: DNS, always allowed when egress is restricted. */}}
{{- define "bootorch.dnsEgress" -}}
- ports:
    - { port: 53, protocol: UDP }
    - { port: 53, protocol: TCP }
{{- end -}}

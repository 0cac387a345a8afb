{{/*
The parts of groundcrew, what each listens on and whom it calls (the
README's call graph). store: embedded means one replica unless the
external store named by scaleWith is configured.
*/}}
{{- define "groundcrew.parts" -}}
search:
  prefix: SEARCH
  grpcPort: 50051
  adminPort: 9091
  calls: []
  store: the local search index (bleve) under DATA_DIR
  scaleWith: search.database.existingSecret (SEARCH_DATABASE_URL, PostgreSQL, where every replica sees every indexed document)
grounding:
  prefix: GROUNDING
  grpcPort: 50052
  adminPort: 9092
  calls: [search, rag, notifier]
  store: SQLite under DATA_DIR
  scaleWith: grounding.database.existingSecret (DATABASE_URL, PostgreSQL)
rag:
  prefix: RAG
  grpcPort: 50053
  adminPort: 9093
  calls: []
  store: the embedded vector index under DATA_DIR
  scaleWith: rag.qdrant.url (QDRANT_URL)
notifier:
  prefix: NOTIFIER
  grpcPort: 50054
  adminPort: 9094
  calls: [grounding]
  store: SQLite under DATA_DIR
  scaleWith: notifier.database.existingSecret (DATABASE_URL, PostgreSQL)
gateway:
  prefix: GATEWAY
  grpcPort: 0
  httpPort: 8080
  adminPort: 9090
  calls: [search, grounding, rag, notifier]
  store: ""
  scaleWith: ""
{{- end }}

{{/* The four gRPC services, in call-graph order. */}}
{{- define "groundcrew.backends" -}}
[search, grounding, rag, notifier]
{{- end }}

{{- define "groundcrew.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "groundcrew.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of one part's objects: <fullname>-<part>. */}}
{{- define "groundcrew.partName" -}}
{{- printf "%s-%s" (include "groundcrew.fullname" .root) .part | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "groundcrew.selectorLabels" -}}
app.kubernetes.io/name: {{ include "groundcrew.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .part }}
{{- end }}

{{- define "groundcrew.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "groundcrew.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: groundcrew
{{- end }}

{{- define "groundcrew.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "groundcrew.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Whether a part keeps its data in an external store (may scale out). */}}
{{- define "groundcrew.external" -}}
{{- $v := index .root.Values .part -}}
{{- if eq .part "gateway" }}true
{{- else if or (eq .part "search") (eq .part "grounding") (eq .part "notifier") }}{{ if $v.database.existingSecret }}true{{ end }}
{{- else if eq .part "rag" }}{{ if $v.qdrant.url }}true{{ end }}
{{- end }}
{{- end }}

{{/*
groundcrew.validate fails the render, with the reason, on combinations that
cannot work: an embedded store with more than one replica or an
autoscaler, and a gateway without API keys.
*/}}
{{- define "groundcrew.validate" -}}
{{- $root := . -}}
{{- $parts := include "groundcrew.parts" . | fromYaml -}}
{{- range $part := list "search" "grounding" "rag" "notifier" "gateway" }}
{{- $v := index $root.Values $part }}
{{- $p := index $parts $part }}
{{- if $v.enabled }}
{{- if not (include "groundcrew.external" (dict "root" $root "part" $part)) }}
{{- if or (gt (int $v.replicas) 1) $v.autoscaling.enabled }}
{{- $asked := printf "%s.replicas=%d" $part (int $v.replicas) }}
{{- if $v.autoscaling.enabled }}{{ $asked = printf "%s.autoscaling.enabled=true" $part }}{{ end }}
{{- if $p.scaleWith }}
{{- fail (printf "%s: %s keeps its data in %s, which one process owns; it runs one replica on a PersistentVolumeClaim. To scale out set %s first." $asked $part $p.store $p.scaleWith) }}
{{- else }}
{{- fail (printf "%s: %s keeps its data in %s, which one process owns; it runs one replica on a PersistentVolumeClaim (no external store replaces it)." $asked $part $p.store) }}
{{- end }}
{{- end }}
{{- end }}
{{- if lt (int $v.replicas) 0 }}
{{- fail (printf "%s.replicas must not be negative" $part) }}
{{- end }}
{{- range $name, $_ := $v.env }}
{{- if regexMatch "^[A-Z_][A-Z0-9_]*$" $name | not }}
{{- fail (printf "%s.env: %q is not an environment variable name" $part $name) }}
{{- end }}
{{- if has $name (list "DATA_DIR" "DATABASE_URL" "SEARCH_DATABASE_URL" "QDRANT_URL" "QDRANT_API_KEY" "GATEWAY_API_KEYS" "GRPC_SHARED_TOKEN" "GRACE_PERIOD") }}
{{- fail (printf "%s.env.%s: the chart sets %s itself; use the values named in values.yaml (secrets by existingSecret)" $part $name $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.gateway.enabled (not .Values.gateway.apiKeys.existingSecret) }}
{{- fail "gateway.apiKeys.existingSecret is empty: the gateway needs GATEWAY_API_KEYS from an existing Secret (kubectl create secret generic groundcrew-api-keys --from-literal=GATEWAY_API_KEYS=ops:$(openssl rand -hex 24))" }}
{{- end }}
{{- end }}

{{/* The gRPC address a caller dials for part: its Service, or externalAddr. */}}
{{- define "groundcrew.addr" -}}
{{- $v := index .root.Values .part -}}
{{- $p := index (include "groundcrew.parts" .root | fromYaml) .part -}}
{{- if $v.enabled -}}
{{ include "groundcrew.partName" . }}:{{ $p.grpcPort }}
{{- else -}}
{{ $v.externalAddr }}
{{- end -}}
{{- end }}

{{- define "groundcrew.image" -}}
{{- $v := index .root.Values .part -}}
{{ $v.image.repository }}:{{ default .root.Chart.AppVersion $v.image.tag }}
{{- end }}

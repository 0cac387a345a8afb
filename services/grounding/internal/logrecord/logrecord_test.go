package logrecord

import "testing"

func TestFlatten(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "MongoDB's JSON log",
			in:   `{"t":{"$date":"2026-11-26T03:12:44.123+00:00"},"s":"W","c":"REPL","id":21235,"ctx":"ReplCoord-0","msg":"Member is in a state that cannot be a sync source","attr":{"member":"mongo-2:27017","error":"stale"}}`,
			want: "Member is in a state that cannot be a sync source\nstale\ns=W c=REPL ctx=ReplCoord-0 attr_member=mongo-2:27017",
		},
		{
			name: "JSON after a syslog prefix",
			in:   `Nov 26 03:12:44 api-3 checkout[812]: {"level":"error","ts":1764126764.2,"msg":"payment call failed","error":"context deadline exceeded","attempt":3}`,
			want: "Nov 26 03:12:44 api-3 checkout[812]: payment call failed\ncontext deadline exceeded\nlevel=error attempt=3",
		},
		{
			name: "a Go service's logfmt",
			in:   `ts=2026-11-26T03:12:44Z level=error caller=resolver.go:88 msg="lookup failed" host=orders-db.internal err="dial udp 10.0.0.10:53: i/o timeout"`,
			want: "lookup failed\ndial udp 10.0.0.10:53: i/o timeout\nlevel=error caller=resolver host=orders-db.internal",
		},
		{
			name: "other lines kept around a record",
			in:   "[FIRING] VaultSealed\n" + `time="2026-11-26T03:12:44Z" level=error msg="core: vault is sealed"`,
			want: "[FIRING] VaultSealed\ncore: vault is sealed\nlevel=error",
		},
		{
			name: "records most severe first",
			in: `{"t":{"$date":"2026-11-26T02:13:40.221+00:00"},"s":"I","c":"REPL","msg":"Sync source candidate chosen"}` + "\n" +
				`{"t":{"$date":"2026-11-26T02:13:40.240+00:00"},"s":"W","c":"REPL","msg":"We are too stale to use candidate as a sync source"}`,
			want: "We are too stale to use candidate as a sync source\ns=W c=REPL\nSync source candidate chosen\ns=I c=REPL",
		},
		{
			name: "records after a line of text keep their order",
			in:   "[FIRING] MongoStale\n" + `level=info msg="sync started"` + "\n" + `level=error msg="too stale"`,
			want: "[FIRING] MongoStale\nsync started\nlevel=info\ntoo stale\nlevel=error",
		},
		{
			name: "the caller's package, not its file and line",
			in:   `{"level":"warn","ts":"2026-11-26T03:14:09.601Z","caller":"etcdserver/util.go:170","msg":"apply request took too long"}`,
			want: "apply request took too long\nlevel=warn caller=etcdserver",
		},
		{name: "Prometheus labels are not a record", in: "alertname=DiskFull instance=db-1 severity=warning", want: "alertname=DiskFull instance=db-1 severity=warning"},
		{name: "prose with an equals sign", in: "replicas=3 but only 1 is ready", want: "replicas=3 but only 1 is ready"},
		{name: "a brace that is no JSON", in: "template {{ .Value }} failed to render", want: "template {{ .Value }} failed to render"},
		{name: "JSON without a message", in: `{"status":500,"path":"/pay"}`, want: `{"status":500,"path":"/pay"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Flatten(tt.in); got != tt.want {
				t.Errorf("Flatten(%s)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

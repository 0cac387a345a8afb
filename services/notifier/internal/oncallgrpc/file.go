package oncallgrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"buf.build/go/protovalidate"
	"go.yaml.in/yaml/v3"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// ParseFile reads NOTIFIER_ONCALL_FILE's document: YAML (or JSON) of the
// OnCallFile message, field names as in the API (snake_case or
// lowerCamelCase), unknown fields refused, the proto's rules applied. Its
// errors name the file and the field.
func ParseFile(path string, data []byte) (*notifierv1.OnCallFile, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &notifierv1.OnCallFile{}
	if err := protojson.Unmarshal(js, f); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "proto: "))
	}
	if err := protovalidate.Validate(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// LoadFile reads the file at path and stores its schedules and policies,
// replacing those with the same ids (the file wins at every start; the API
// can change them in between). It returns how many of each it stored.
func LoadFile(ctx context.Context, store Store, path string) (schedules, policies int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE: %w", err)
	}
	f, err := ParseFile(path, data)
	if err != nil {
		return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE %w", err)
	}
	by := "file:" + path
	ids := map[string]bool{}
	existing, err := store.Schedules(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, sc := range existing {
		ids[sc.ID] = true
	}
	for i, in := range f.GetSchedules() {
		if in.GetId() == "" {
			return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE %s: schedules[%d].id: a schedule needs an id", path, i)
		}
		sc, err := fromSchedule(fmt.Sprintf("schedules[%d].", i), in)
		if err != nil {
			return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE %s: %s", path, describe(err))
		}
		if err := store.PutSchedule(ctx, sc, by); err != nil {
			return 0, 0, err
		}
		ids[sc.ID] = true
	}
	for i, in := range f.GetPolicies() {
		if in.GetId() == "" {
			return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE %s: policies[%d].id: a policy needs an id", path, i)
		}
		p, err := fromPolicy(fmt.Sprintf("policies[%d].", i), in, ids)
		if err != nil {
			return 0, 0, fmt.Errorf("NOTIFIER_ONCALL_FILE %s: %s", path, describe(err))
		}
		if err := store.PutPolicy(ctx, p, by); err != nil {
			return 0, 0, err
		}
	}
	return len(f.GetSchedules()), len(f.GetPolicies()), nil
}

// describe writes a field-violation status as "field: what; field: what".
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	var parts []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				parts = append(parts, v.GetField()+": "+v.GetDescription())
			}
		}
	}
	if len(parts) == 0 {
		return st.Message()
	}
	return strings.Join(parts, "; ")
}

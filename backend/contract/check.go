package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// CheckFrame reports whether data is a valid payload of frame event as the contract
// declares it: the event is registered and data decodes into its type with no member
// the type does not declare (nested objects included). Tests run it on every frame the
// host emits, so a member added on the Go side without its type, or a frame with no
// type, fails. Errors name the event and the member.
func CheckFrame(event string, data []byte) error {
	t, ok := DataType(event)
	if !ok {
		return fmt.Errorf("frame %q is not registered in backend/contract", event)
	}
	if f, _ := frameOf(event); f.SidecarOnly {
		return fmt.Errorf("frame %q is the sidecar's only and must not reach the window", event)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	v := reflect.New(t).Interface()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("frame %q: %s does not match %s: %w", event, data, t, err)
	}
	return nil
}

package app

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"talaria/backend/contract"
)

// Every struct a bound method takes or returns is generated for the window
// (frontend/src/lib/protocol.gen.ts): a method added with a new type fails here until
// the type is registered in backend/contract.
func TestBoundMethodTypesAreGenerated(t *testing.T) {
	generated, err := contract.GeneratedTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ServicesOf(&App{}).Bound() {
		checkBoundTypes(t, reflect.TypeOf(s), generated)
	}
}

// maxBoundMethods is the most exported methods one bound service may have (issue 25:
// one room per area; a service that outgrows it is split by area).
const maxBoundMethods = 25

// App binds nothing (its exported methods would be bound to the window), every
// service keeps to maxBoundMethods, and no two services bind one name (the window
// calls each by name).
func TestBoundServicesStaySmall(t *testing.T) {
	if n := reflect.TypeOf(&App{}).NumMethod(); n != 0 {
		t.Errorf("App has %d exported methods: bound methods belong to a service (services.go)", n)
	}
	owner := map[string]string{}
	for _, s := range ServicesOf(&App{}).Bound() {
		st := reflect.TypeOf(s)
		if n := st.NumMethod(); n == 0 || n > maxBoundMethods {
			t.Errorf("%s has %d exported methods; want 1 to %d", st.Elem().Name(), n, maxBoundMethods)
		}
		for i := 0; i < st.NumMethod(); i++ {
			name := st.Method(i).Name
			if prev, ok := owner[name]; ok {
				t.Errorf("%s is bound by both %s and %s", name, prev, st.Elem().Name())
			}
			owner[name] = st.Elem().Name()
		}
	}
}

func checkBoundTypes(t *testing.T, at reflect.Type, generated map[reflect.Type]string) {
	t.Helper()
	for i := 0; i < at.NumMethod(); i++ {
		m := at.Method(i)
		var types []reflect.Type
		for j := 1; j < m.Type.NumIn(); j++ {
			types = append(types, m.Type.In(j))
		}
		for j := 0; j < m.Type.NumOut(); j++ {
			types = append(types, m.Type.Out(j))
		}
		for _, typ := range types {
			for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct {
				continue
			}
			if _, ok := generated[typ]; !ok {
				t.Errorf("%s.%s uses %s, which backend/contract does not generate (add it to contract.Types)", at.Elem().Name(), m.Name, typ)
			}
		}
	}
}

// The typed bindings the window calls (frontend/src/lib/bindings.gen.ts) must be what
// the bound services generate now: run `make bindings` (or go run ./app/bindgen) after
// changing a bound method or a type it uses.
func TestGeneratedBindingsAreCurrent(t *testing.T) {
	want, err := contract.GenerateBindings(ServicesOf(&App{}).Bound())
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	got, err := os.ReadFile(filepath.Join(contract.ModuleRoot(), contract.BindingsFile))
	if err != nil {
		t.Fatalf("read %s: %v (run make bindings)", contract.BindingsFile, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is out of date (run make bindings); first difference at line %d:\n have %q\n want %q", contract.BindingsFile, i+1, g, w)
		}
	}
}

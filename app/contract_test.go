package app

import (
	"reflect"
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
	for _, at := range []reflect.Type{reflect.TypeOf(&App{}), reflect.TypeOf(&Imports{}), reflect.TypeOf(&Remotes{})} {
		checkBoundTypes(t, at, generated)
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

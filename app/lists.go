package app

import (
	"encoding/json"
	"reflect"
	"strings"
)

// lists returns v as the window must receive it: every nil slice and map that
// encoding/json would write as null (the result itself, an element, a map value, a
// struct field without omitempty or omitzero) made empty, so the TypeScript contract's
// `T[]` holds (bindings.gen.ts has no `| null` on a list). v is not changed: each
// struct, slice or map on the way to a change is copied (the backend may share what it
// returned), and nothing is copied when nothing is nil. Types with their own JSON
// encoding (json.Marshaler) are left as they are.
func lists[T any](v T) T {
	if out, changed := fillLists(reflect.ValueOf(&v).Elem()); changed {
		return out.Interface().(T)
	}
	return v
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// fillLists returns v with its nil lists made empty and whether it changed anything.
func fillLists(v reflect.Value) (reflect.Value, bool) {
	t := v.Type()
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return v, false
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(t, 0, 0), true
		}
		var out reflect.Value
		for i := range v.Len() {
			e, changed := fillLists(v.Index(i))
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeSlice(t, v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			out.Index(i).Set(e)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Map:
		if v.IsNil() {
			return reflect.MakeMap(t), true
		}
		var out reflect.Value
		for it := v.MapRange(); it.Next(); {
			e, changed := fillLists(it.Value())
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeMapWithSize(t, v.Len())
				for c := v.MapRange(); c.Next(); {
					out.SetMapIndex(c.Key(), c.Value())
				}
			}
			out.SetMapIndex(it.Key(), e)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			return v, false // a pointer is nullable in the contract
		}
		if e, changed := fillLists(v.Elem()); changed {
			p := reflect.New(t.Elem())
			p.Elem().Set(e)
			return p, true
		}
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		if e, changed := fillLists(v.Elem()); changed {
			out := reflect.New(t).Elem()
			out.Set(e)
			return out, true
		}
	case reflect.Struct:
		var out reflect.Value
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			fv := v.Field(i)
			if o := "," + opts + ","; (strings.Contains(o, ",omitempty,") || strings.Contains(o, ",omitzero,")) &&
				(fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() == 0 {
				continue // omitted from the JSON, optional in the contract
			}
			e, changed := fillLists(fv)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(t).Elem()
				out.Set(v)
			}
			out.Field(i).Set(e)
		}
		if out.IsValid() {
			return out, true
		}
	}
	return v, false
}

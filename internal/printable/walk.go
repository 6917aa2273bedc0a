package printable

import "reflect"

// Strings applies escape (Name or Text) to every string reachable from v,
// a pointer, in place: exported struct fields, slice and array elements,
// map values, through pointers and interfaces. It is for a renderer that
// has made its own copy of a result to show, so that every name in it is
// escaped without the renderer naming each field.
func Strings(v any, escape func(string) string) {
	walk(reflect.ValueOf(v), escape)
}

func walk(v reflect.Value, escape func(string) string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), escape)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i), escape)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), escape)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			walk(e, escape)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(escape(v.String()))
		}
	}
}

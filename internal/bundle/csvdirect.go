package bundle

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The direct path fills the CSV struct from the document's values without
// the JSON round trip decodeCSVRoundTrip makes, and gives exactly the struct
// json.Unmarshal(json.Marshal(value)) gives. It follows encoding/json's
// rules only where they are simple: field names matched exactly, then case
// insensitively; numbers as float64 in `any`; fresh maps and slices, empty
// ones non-nil; null leaving values as they are and clearing pointers, maps,
// slices and interfaces; json.RawMessage as json.Marshal writes the value.
// Anything else — a type that does not fit (which the round trip records as
// a FieldTypeError), two keys for one field, invalid UTF-8, a value json
// cannot write, a struct type it does not know how to mirror — makes it give
// up, and the round trip decides.

// planOp says how a Go type is filled.
type planOp uint8

const (
	opString planOp = iota
	opBool
	opInt
	opUint
	opFloat64
	opAny
	opStruct
	opSlice
	opMap
	opPtr
	opRaw
)

// typePlan is what the direct path knows of one Go type.
type typePlan struct {
	op     planOp
	typ    reflect.Type
	elem   *typePlan // slice, map and pointer elements
	fields []fieldPlan
	exact  map[string]int // json name -> index into fields
}

// fieldPlan is one decoded struct field, in declaration order.
type fieldPlan struct {
	name  string // the json name
	index int    // the Go field index
	plan  *typePlan
}

// maxDirectDepth keeps the direct path away from nesting where
// encoding/json's own limits would start to matter.
const maxDirectDepth = 1000

var (
	csvPlanOnce sync.Once
	csvPlan     *typePlan
)

// csvTypePlan is the plan for CSV, or nil when some type under it is one
// the direct path does not mirror (then every CSV takes the round trip).
func csvTypePlan() *typePlan {
	csvPlanOnce.Do(func() {
		csvPlan, _ = planFor(reflect.TypeFor[CSV](), map[reflect.Type]*typePlan{})
	})
	return csvPlan
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasUnmarshalMethod reports whether encoding/json would hand t's values
// to a method of their own.
func hasUnmarshalMethod(t reflect.Type) bool {
	for _, u := range []reflect.Type{jsonUnmarshalerType, textUnmarshalerType} {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return true
		}
	}
	return false
}

// planFor builds the plan of t; ok is false for types the direct path does
// not mirror.
func planFor(t reflect.Type, seen map[reflect.Type]*typePlan) (*typePlan, bool) {
	if p, ok := seen[t]; ok {
		return p, true
	}
	p := &typePlan{typ: t}
	seen[t] = p
	if t == rawMessageType {
		p.op = opRaw
		return p, true
	}
	// A pointer's methods are its element's, checked there.
	if t == numberType || t.Kind() != reflect.Pointer && hasUnmarshalMethod(t) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		p.op = opString
	case reflect.Bool:
		p.op = opBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.op = opInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.op = opUint
	case reflect.Float64:
		p.op = opFloat64
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, false
		}
		p.op = opAny
	case reflect.Pointer:
		p.op = opPtr
		e, ok := planFor(t.Elem(), seen)
		if !ok {
			return nil, false
		}
		p.elem = e
	case reflect.Slice:
		// []byte is base64 in JSON.
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false
		}
		p.op = opSlice
		e, ok := planFor(t.Elem(), seen)
		if !ok {
			return nil, false
		}
		p.elem = e
	case reflect.Map:
		if t.Key().Kind() != reflect.String || hasUnmarshalMethod(t.Key()) {
			return nil, false
		}
		p.op = opMap
		e, ok := planFor(t.Elem(), seen)
		if !ok {
			return nil, false
		}
		p.elem = e
	case reflect.Struct:
		p.op = opStruct
		p.exact = map[string]int{}
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous {
				// Embedded fields bring encoding/json's promotion rules.
				return nil, false
			}
			if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if opts != "" && opts != "omitempty" && opts != "omitzero" {
				return nil, false // ",string" and the like
			}
			if name == "" {
				name = sf.Name
			} else if !plainTagName(name) {
				return nil, false
			}
			if _, dup := p.exact[name]; dup {
				return nil, false
			}
			fp, ok := planFor(sf.Type, seen)
			if !ok {
				return nil, false
			}
			p.exact[name] = len(p.fields)
			p.fields = append(p.fields, fieldPlan{name: name, index: i, plan: fp})
		}
	default:
		return nil, false
	}
	return p, true
}

// plainTagName reports whether a json tag name is one encoding/json uses
// as written (a conservative subset of the names it accepts).
func plainTagName(s string) bool {
	for _, c := range s {
		if c != '_' && c != '-' && c != '.' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// decodeCSVDirect is the direct path; ok is false when it gave up.
func decodeCSVDirect(obj *Object) (*CSV, bool) {
	plan := csvTypePlan()
	m, isMap := obj.Doc.Value.(map[string]any)
	if plan == nil || !isMap {
		return nil, false
	}
	csv := &CSV{}
	if !plan.fill(reflect.ValueOf(csv).Elem(), m, 0) {
		return nil, false
	}
	csv.Object = obj
	return csv, true
}

// fill stores x into v, which holds its type's zero value, as decoding
// x's JSON text into v would; false when the direct path gives up.
func (p *typePlan) fill(v reflect.Value, x any, depth int) bool {
	if depth > maxDirectDepth {
		return false
	}
	if p.op == opPtr {
		if x == nil {
			return true // stays nil
		}
		n := reflect.New(p.elem.typ)
		if !p.elem.fill(n.Elem(), x, depth+1) {
			return false
		}
		v.Set(n)
		return true
	}
	if p.op == opRaw {
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		v.SetBytes(b)
		return true
	}
	switch t := x.(type) {
	case nil:
		// null clears pointers, maps, slices and interfaces, all zero
		// already, and leaves everything else as it is.
		return true
	case bool:
		switch p.op {
		case opBool:
			v.SetBool(t)
		case opAny:
			v.Set(reflect.ValueOf(t))
		default:
			return false
		}
		return true
	case string:
		if !utf8.ValidString(t) {
			return false // json.Marshal would replace the bad bytes
		}
		switch p.op {
		case opString:
			v.SetString(t)
		case opAny:
			v.Set(reflect.ValueOf(t))
		default:
			return false
		}
		return true
	case int64:
		switch p.op {
		case opAny:
			v.Set(reflect.ValueOf(float64(t)))
		case opFloat64:
			v.SetFloat(float64(t))
		case opInt:
			if v.OverflowInt(t) {
				return false
			}
			v.SetInt(t)
		case opUint:
			if t < 0 || v.OverflowUint(uint64(t)) {
				return false
			}
			v.SetUint(uint64(t))
		default:
			return false
		}
		return true
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return false // json.Marshal refuses them
		}
		switch p.op {
		case opAny:
			v.Set(reflect.ValueOf(t))
		case opFloat64:
			v.SetFloat(t)
		default:
			// Into an integer only when the shortest form has no
			// fraction or exponent: left to the round trip.
			return false
		}
		return true
	case map[string]any:
		switch p.op {
		case opStruct:
			return p.fillStruct(v, t, depth)
		case opMap:
			m := reflect.MakeMapWithSize(p.typ, len(t))
			kt := p.typ.Key()
			for k, e := range t {
				if !utf8.ValidString(k) {
					return false
				}
				ev := reflect.New(p.elem.typ).Elem()
				if !p.elem.fill(ev, e, depth+1) {
					return false
				}
				m.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
			}
			v.Set(m)
			return true
		case opAny:
			return setPlainCopy(v, t, depth)
		}
		return false
	case []any:
		switch p.op {
		case opSlice:
			s := reflect.MakeSlice(p.typ, len(t), len(t))
			for i, e := range t {
				if !p.elem.fill(s.Index(i), e, depth+1) {
					return false
				}
			}
			v.Set(s)
			return true
		case opAny:
			return setPlainCopy(v, t, depth)
		}
		return false
	}
	return false
}

// fillStruct matches keys to fields as encoding/json does: the field of
// that exact name, else the first field whose name equals the key under
// Unicode case folding. Keys matching no field are skipped but must still
// be values json.Marshal writes.
func (p *typePlan) fillStruct(v reflect.Value, m map[string]any, depth int) bool {
	var small [32]bool
	var set []bool
	if len(p.fields) <= len(small) {
		set = small[:len(p.fields)]
	} else {
		set = make([]bool, len(p.fields))
	}
	for k, e := range m {
		if !utf8.ValidString(k) {
			return false
		}
		i, ok := p.exact[k]
		if !ok {
			i = -1
			for j := range p.fields {
				if strings.EqualFold(p.fields[j].name, k) {
					i = j
					break
				}
			}
		}
		if i < 0 {
			if !plainValue(e, depth+1) {
				return false
			}
			continue
		}
		if set[i] {
			// Two keys for one field: encoding/json decodes the second
			// over the first, in key order. Left to the round trip.
			return false
		}
		set[i] = true
		f := &p.fields[i]
		if !f.plan.fill(v.Field(f.index), e, depth+1) {
			return false
		}
	}
	return true
}

// plainValue reports whether x is made only of the values documents hold
// and json.Marshal writes as they are.
func plainValue(x any, depth int) bool {
	if depth > maxDirectDepth {
		return false
	}
	switch t := x.(type) {
	case nil, bool, int64:
		return true
	case string:
		return utf8.ValidString(t)
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	case map[string]any:
		for k, e := range t {
			if !utf8.ValidString(k) || !plainValue(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range t {
			if !plainValue(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// setPlainCopy sets the interface v to a plain copy of the mapping or
// list x (see plainCopy).
func setPlainCopy(v reflect.Value, x any, depth int) bool {
	c, ok := plainCopy(x, depth)
	if ok {
		v.Set(reflect.ValueOf(c))
	}
	return ok
}

// plainCopy is x as decoding its JSON text into an `any` gives it: fresh
// maps and slices, numbers as float64.
func plainCopy(x any, depth int) (any, bool) {
	if depth > maxDirectDepth {
		return nil, false
	}
	switch t := x.(type) {
	case nil, bool:
		return t, true
	case string:
		return t, utf8.ValidString(t)
	case int64:
		return float64(t), true
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			if !utf8.ValidString(k) {
				return nil, false
			}
			c, ok := plainCopy(e, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			c, ok := plainCopy(e, depth+1)
			if !ok {
				return nil, false
			}
			s[i] = c
		}
		return s, true
	}
	return nil, false
}

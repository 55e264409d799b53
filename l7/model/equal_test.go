package model

import (
	"net/netip"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// filler builds a Service with every field reachable from it set: every
// leaf to its base value, but the leaf at path to another, and the slice,
// map or pointer at path+"#nil" left nil, the slice at path+"#2" with two
// elements. paths collects every path it passed.
type filler struct {
	target string
	paths  []string
}

func (f *filler) fill(v reflect.Value, path string) {
	alt := f.target == path
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct:
	default:
		f.paths = append(f.paths, path) // a leaf
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[netip.Addr](), reflect.TypeFor[PrivateKey]():
		f.paths = append(f.paths, path) // leaves too
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(int64(1+btoi(alt)), 0)))
		return
	case reflect.TypeFor[netip.Addr]():
		v.Set(reflect.ValueOf(netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + btoi(alt))})))
		return
	case reflect.TypeFor[netip.AddrPort]():
		v.Set(reflect.ValueOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 1}), uint16(80+btoi(alt)))))
		f.paths = append(f.paths, path, path+"/port")
		if f.target == path+"/port" {
			v.Set(reflect.ValueOf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 9}), 80)))
		}
		return
	case reflect.TypeFor[PrivateKey]():
		v.Set(reflect.ValueOf(NewPrivateKey([]byte("key" + strconv.Itoa(btoi(alt))))))
		return
	}
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map || v.Kind() == reflect.Pointer) && f.shape(path, "#nil") {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(btoi(alt)))
	case reflect.Bool:
		v.SetBool(!alt)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(1 + btoi(alt)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(1 + btoi(alt)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(1 + btoi(alt)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), path+"*")
	case reflect.Slice:
		n := 1
		if f.shape(path, "#2") {
			n = 2
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			f.fill(v.Index(i), path+"[]")
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k := reflect.New(v.Type().Key()).Elem()
		f.fill(k, path+"{key}")
		e := reflect.New(v.Type().Elem()).Elem()
		f.fill(e, path+"{}")
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				panic("unexported field " + path + "." + v.Type().Field(i).Name + ": make its type a leaf of fill")
			}
			f.fill(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		panic("no filler for " + v.Type().String() + " at " + path)
	}
}

// shape records path+suffix and reports whether it is the target.
func (f *filler) shape(path, suffix string) bool {
	f.paths = append(f.paths, path+suffix)
	return f.target == path+suffix
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func filled(target string) (Service, []string) {
	f := &filler{target: target}
	var s Service
	f.fill(reflect.ValueOf(&s).Elem(), "")
	return s, f.paths
}

// TestEqualSeesEveryField: two services built alike are equal, and a
// change of any one field anywhere in a service (a value, a slice, map or
// pointer left nil, a slice one longer) makes them differ. It walks the
// types by reflection, so a field added to the model and forgotten in
// equal.go fails here: a cache would otherwise serve what it built for the
// service before the change.
func TestEqualSeesEveryField(t *testing.T) {
	base, paths := filled("none")
	again, _ := filled("none")
	if !base.Equal(&again) {
		t.Fatal("two services built alike differ")
	}
	if len(paths) < 200 {
		t.Fatalf("walked only %d paths", len(paths))
	}
	for _, p := range paths {
		other, _ := filled(p)
		if base.Equal(&other) || other.Equal(&base) {
			t.Errorf("a change at %s is not seen", p)
		}
		if !reflect.DeepEqual(other, other) {
			t.Fatalf("%s: the changed service is not equal to itself", p)
		}
	}
}

// scribble changes, in place, every value reachable from v through
// slices, maps and pointers.
func scribble(v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[netip.Addr](), reflect.TypeFor[netip.AddrPort]():
		return // values without shared parts
	case reflect.TypeFor[PrivateKey]():
		k := v.Addr().Interface().(*PrivateKey)
		for i := range k.pem {
			k.pem[i]++
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			scribble(v.Field(i))
		}
	}
}

// TestCloneSharesNothing: everything reachable in a clone is changed in
// place, and the original is as it was; the clone of a service equals it.
// A field added to the model and not copied by Clone fails here (a cache
// would see no change when a source changes that field in place).
func TestCloneSharesNothing(t *testing.T) {
	orig, _ := filled("none")
	c := orig.Clone()
	if !c.Equal(&orig) {
		t.Fatal("a clone differs from its service")
	}
	scribble(reflect.ValueOf(&c).Elem())
	want, _ := filled("none")
	if !orig.Equal(&want) {
		t.Fatal("changing the clone changed the service")
	}
	if c.Equal(&orig) {
		t.Fatal("the scribble changed nothing")
	}
	for _, p := range []string{".Hosts#nil", ".Routes#nil", ".Routes[].Headers#nil", ".Responses*.ErrorPages#nil"} {
		s, _ := filled(p)
		if c := s.Clone(); !c.Equal(&s) {
			t.Errorf("the clone of a service with nil at %s differs from it", p)
		}
	}
}

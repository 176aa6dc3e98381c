// The one declaration of a BPF map of the programs of this directory (included by stack.h,
// which every program includes): `MAP(name, KIND, entries, key type, value type)` declares
// map `name` of `BPF_MAP_TYPE_KIND` (HASH, ARRAY, PERCPU_ARRAY, ...) in the BTF-described
// form libbpf and aya read. A map whose key and value are sizes, not types (the stack
// trace map of stack.h), is written out.
#ifndef SYSMETER_BPF_MAPS_H
#define SYSMETER_BPF_MAPS_H

#define MAP(name, kind, entries, key_type, value_type)                                    \
	struct {                                                                           \
		__uint(type, BPF_MAP_TYPE_##kind);                                         \
		__uint(max_entries, entries);                                              \
		__type(key, key_type);                                                     \
		__type(value, value_type);                                                 \
	} name SEC(".maps")

#endif

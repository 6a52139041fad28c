// The Sparkplug B payload of the Sparkplug 3.0 specification (its protobuf schema, proto2), written
// out here from the specification's field list and compiled at start by protobufjs (codec.ts). A
// string rather than a .proto file beside the sources, so the build has nothing to copy.

/** The scalars every `oneof value` of the schema starts with, in this order. */
const SCALARS = [
  'uint32 int_value',
  'uint64 long_value',
  'float float_value',
  'double double_value',
  'bool boolean_value',
  'string string_value',
];

/**
 * A `oneof value` numbered from `first`: the scalars, then `more`, then `extension_value` of the
 * message `extension` (declared beside it, open to extensions), as the specification has them.
 */
function valueOf(first: number, extension: string, more: string[] = []): string {
  const fields = [...SCALARS, ...more, `${extension} extension_value`];
  return `oneof value {
${fields.map((f, i) => `  ${f} = ${first + i};`).join('\n')}
}
message ${extension} {
  extensions 1 to max;
}`;
}

/** Fields numbered from `first`, in order, on one line: `fields(1, 'optional string name')`. */
const fields = (first: number, ...specs: string[]): string =>
  specs.map((spec, i) => `${spec} = ${first + i};`).join(' ');

export const SPARKPLUG_B_PROTO = `
syntax = "proto2";
package org.eclipse.tahu.protobuf;

message Payload {
  message Template {
    message Parameter {
      optional string name = 1;
      optional uint32 type = 2;
      ${valueOf(3, 'ParameterValueExtension')}
    }
    ${fields(1, 'optional string version', 'repeated Metric metrics', 'repeated Parameter parameters')}
    ${fields(4, 'optional string template_ref', 'optional bool is_definition')}
    extensions 6 to max;
  }

  message DataSet {
    message DataSetValue {
      ${valueOf(1, 'DataSetValueExtension')}
    }
    message Row {
      repeated DataSetValue elements = 1;
      extensions 2 to max;
    }
    ${fields(1, 'optional uint64 num_of_columns', 'repeated string columns')}
    ${fields(3, 'repeated uint32 types', 'repeated Row rows')}
    extensions 5 to max;
  }

  message PropertyValue {
    optional uint32 type = 1;
    optional bool is_null = 2;
    ${valueOf(3, 'PropertyValueExtension', ['PropertySet propertyset_value', 'PropertySetList propertysets_value'])}
  }

  message PropertySet {
    repeated string keys = 1;
    repeated PropertyValue values = 2;
    extensions 3 to max;
  }

  message PropertySetList {
    repeated PropertySet propertyset = 1;
    extensions 2 to max;
  }

  message MetaData {
    ${fields(1, 'optional bool is_multi_part', 'optional string content_type', 'optional uint64 size')}
    ${fields(4, 'optional uint64 seq', 'optional string file_name', 'optional string file_type')}
    ${fields(7, 'optional string md5', 'optional string description')}
    extensions 9 to max;
  }

  message Metric {
    ${fields(1, 'optional string name', 'optional uint64 alias', 'optional uint64 timestamp')}
    ${fields(4, 'optional uint32 datatype', 'optional bool is_historical', 'optional bool is_transient')}
    ${fields(7, 'optional bool is_null', 'optional MetaData metadata', 'optional PropertySet properties')}
    ${valueOf(10, 'MetricValueExtension', ['bytes bytes_value', 'DataSet dataset_value', 'Template template_value'])}
  }

  ${fields(1, 'optional uint64 timestamp', 'repeated Metric metrics', 'optional uint64 seq')}
  ${fields(4, 'optional string uuid', 'optional bytes body')}
  extensions 6 to max;
}
`;

/** The package version, shown in the OpenAPI document. */
export const version = '0.1.0'

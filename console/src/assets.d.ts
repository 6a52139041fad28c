// Vite's `?url` imports: the address of a file the build copies into the console's assets.
declare module '*?url' {
  const url: string;
  export default url;
}

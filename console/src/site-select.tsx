/** The site picker of the alarms, charts and tickets pages: a labelled select of the client's sites. */
export function SiteSelect(props: {
  id: string;
  value: number;
  sites: { SiteID: number; Name: string }[] | undefined;
  /** The first option, meaning no site chosen ("All sites", "Choose a site"). */
  none: string;
  onChange: (site: string) => void;
}) {
  return (
    <>
      <label for={props.id}>Site</label>
      <select
        id={props.id}
        value={props.value || ''}
        onChange={(e) => props.onChange(e.currentTarget.value)}
      >
        <option value="">{props.none}</option>
        {props.sites?.map((s) => (
          <option key={s.SiteID} value={s.SiteID}>
            {s.Name}
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * A file picker drawn as one of the page's buttons ("Open log file…", then the chosen file's name)
 * instead of the browser's raw "Choose File / No file chosen" control. The real `<input
 * type="file">` stays in the label, visually hidden but focusable, so keyboard and assistive
 * technology use it as before.
 */
import { useState, type ChangeEvent, type ReactElement } from 'react';

/** Props of {@link FilePickerButton}. */
export interface FilePickerButtonProps {
  /** The button's text. */
  readonly label: string;
  /** What the file is for (the tooltip). */
  readonly title: string;
  /** `accept` of the input, e.g. `application/json,.json`. */
  readonly accept: string;
  readonly onChange: (event: ChangeEvent<HTMLInputElement>) => void;
  /** Test id of the input. */
  readonly testId: string;
}

/** The picker: a label styled as a button around a hidden file input, and the chosen name after it. */
export function FilePickerButton(props: FilePickerButtonProps): ReactElement {
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  return (
    <span className="file-picker">
      <label className="button" title={props.title}>
        {props.label}
        <input
          type="file"
          className="sr-only"
          accept={props.accept}
          data-testid={props.testId}
          onChange={(event) => {
            setChosen(event.target.files?.[0]?.name);
            props.onChange(event);
          }}
        />
      </label>
      {chosen !== undefined && (
        <span className="file-name" data-testid={`${props.testId}-name`}>
          {chosen}
        </span>
      )}
    </span>
  );
}

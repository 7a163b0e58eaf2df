import { Layout } from './layout.js';

export function ErrorPage(props: { title: string; message: string }) {
  return (
    <Layout title={props.title} section={null}>
      <p>{props.message}</p>
      <p>
        <a href="/">Back to the status page</a>
      </p>
    </Layout>
  );
}
